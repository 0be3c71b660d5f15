"""ParseTaskPipeline: the thin orchestrator of
docs/design/0001-pipeline-contract.md and docs/design/0002-run-state-machine.md.

It takes a task already decoded at the consumer edge, validates it, holds the idempotency
barrier (unique task_id), converges redeliveries, runs the retry branch of invariant 6 of
docs/design/0002-run-state-machine.md in one unit of work, then hands the run to the declared
stages. Every terminal state it writes goes into the outbox in the same commit (`ResultOutbox`).

A known task_id is a redelivery only when the message names the stored run's tenant and
file; any other message with it is DUPLICATE_TASK: dead-lettered, nothing stored, nothing
published, the stored run untouched and undisclosed (docs/security.md, Existence and ids).
A retry naming another tenant's run is refused exactly as one naming no run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ragline.application.access import Caller
from ragline.application.error_text import describe
from ragline.application.pipeline.context import RunContext, document_scope
from ragline.application.pipeline.outcome import OutcomeKind, PipelineOutcome
from ragline.application.pipeline.results import ResultOutbox
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages import PipelineStage, default_stages
from ragline.application.pipeline.validation import invalid_context, refused_reference
from ragline.application.ports.repositories.errors import ConcurrentUpdate, DuplicateTaskId
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.tasks import (
    ParseTaskCommand,
    RejectedBody,
    StoredTask,
    TaskIssuer,
    UnreadableTask,
)
from ragline.domain.parse_run import (
    FailureCode,
    MarkdownLocation,
    ParseRun,
    RetryRefusal,
    TaskIdentity,
    retry_refusal,
)

log = logging.getLogger(__name__)


def task_source(task: ParseTaskCommand) -> MarkdownLocation:
    """The object a valid task names as its source (recorded with it: a document delete
    never removes an object a live document names as its source)."""
    return MarkdownLocation(task.source_bucket, task.source_object_key)


def duplicate_task(task_id: str) -> str:
    """The dead-letter reason of a message whose task_id another task holds: it says the id
    is taken and nothing else (not whose, not in what state)."""
    return f"{FailureCode.DUPLICATE_TASK.value}:task_id {task_id} is already used by another task"


def _rejected(reason: str, unreadable: UnreadableTask) -> RejectedBody:
    return RejectedBody(reason=reason, body_text=unreadable.body_text)


class ParseTaskPipeline:
    """One parse task -> one terminal run with its result in the outbox."""

    def __init__(
        self,
        services: StageServices,
        stages: Sequence[PipelineStage[Any]] | None = None,
    ) -> None:
        self.services = services
        self._stages = stages
        self._started = False
        self.results = ResultOutbox(
            topic=services.settings.result_topic,
            language=services.settings.language,
            metrics=services.metrics,
        )

    # -- entry points -------------------------------------------------------------------

    def start_up(self) -> int:
        """Clean the temp workspace (leftovers of a crashed process). Only the first call
        cleans: consumers sharing this pipeline may call it while others already work."""
        if self._started:
            return 0
        self._started = True
        return self.services.workspace.clean()

    async def handle(self, task: ParseTaskCommand) -> PipelineOutcome:
        """Run one decoded task to its terminal state (or settle its redelivery)."""
        problem = invalid_context(task) or refused_reference(task, self.services.references)
        identity = task.identity
        if problem is not None or task.is_retry:
            existing = await self._settle_existing(identity)
            if existing is not None:
                return existing
        # a valid first attempt meets the idempotency barrier inside `_open`
        try:
            if problem is not None:
                await self._reject(identity, task, FailureCode.INVALID_TASK_CONTEXT, problem)
                return PipelineOutcome(OutcomeKind.REJECTED, task.task_id, problem)
            if task.is_retry:
                opened = await self._open_retry(task, identity)
            else:
                opened = await self._open(identity, task, task_source(task))
        except DuplicateTaskId:
            # the same task_id was recorded concurrently: it is a redelivery after all
            settled = await self._settle_existing(identity)
            if settled is None:
                raise
            return settled
        if isinstance(opened, PipelineOutcome):
            return opened
        run, parsed_log_id = opened
        ctx = RunContext(task, run, parsed_log_id, document_scope(task))
        beating = asyncio.create_task(self._heartbeat(task.task_id))
        try:
            stages = self.stages()
            for position, stage in enumerate(stages):
                later = stages[position + 1 :]
                ctx.following = later[0].stage if later else None
                await stage.execute(ctx)
                if run.is_terminal:
                    break
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
            ctx.outputs.discard()  # a spooled keyword plan included
        return PipelineOutcome(OutcomeKind.RAN, task.task_id, run.pipeline_status.value)

    async def _heartbeat(self, task_id: str) -> None:
        """While the stages run: touch the run's heartbeat every interval, so the stale-run
        sweep of any worker leaves it alone. A failed touch is only logged (the next one
        may pass; a run without heartbeats for `stale_after` is ended by the sweep)."""
        services = self.services
        interval = services.settings.heartbeat_interval.total_seconds()
        while True:
            await asyncio.sleep(interval)
            try:
                async with services.uow() as uow:
                    alive = await uow.runs.heartbeat(task_id, services.clock.now())
                    await uow.commit()
            except Exception as error:
                log.warning("heartbeat of run %s failed: %s", task_id, describe(error))
                continue
            if not alive:  # ended, or a sweep converged it: its next save will say so
                return

    async def converge_stale(self, limit: int = 100) -> list[str]:
        """End unfinished runs without a heartbeat for `stale_after`: their worker died, or
        it could not record the failure that stopped them (the message was dead-lettered,
        so no redelivery will come). Each becomes FAILED INTERRUPTED_TASK at the stage in
        flight (recoverable by retry) with its result queued, exactly as a redelivery would
        converge it. The claim is a compare-and-set on the heartbeat, so two workers
        sweeping at once converge each run once. Returns the task_ids converged."""
        services = self.services
        before = services.clock.now() - services.settings.stale_after
        async with services.uow() as uow:
            stale = await uow.runs.list_stale(before, limit)
        converged: list[str] = []
        for task_id in stale:
            try:
                if await self._converge_stale(task_id, before):
                    converged.append(task_id)
            except ConcurrentUpdate:  # its worker saved it meanwhile: it is alive after all
                continue
        if converged:
            log.warning("converged %d stale run(s): %s", len(converged), ", ".join(converged))
        return converged

    async def sweep_until(self, stop: asyncio.Event) -> None:
        """`converge_stale` at start-up and then every two heartbeat intervals until
        `stop` (what `ragline worker` runs beside its consumers and relay)."""
        pause = 2 * self.services.settings.heartbeat_interval.total_seconds()
        while not stop.is_set():
            try:
                for _ in range(10):  # a backlog: sweep up to 1,000 runs now
                    if len(await self.converge_stale()) < 100:
                        break
            except Exception as error:  # the store hiccuped: sweep again later
                log.error("stale-run sweep failed: %s", describe(error))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=pause)

    async def _converge_stale(self, task_id: str, before: datetime) -> bool:
        services = self.services
        async with services.uow() as uow:
            at = services.clock.now()
            if not await uow.runs.claim_stale(task_id, before, at):
                return False
            run = await uow.runs.get(task_id)
            if run is None or run.is_terminal:
                return False
            parsed = await uow.parsed_logs.get(task_id)
            expected = run.version
            run.converge_interrupted(at, f"no heartbeat since before {before.isoformat()}")
            await uow.runs.save(run, expected)
            await self.results.queue_owed_results(uow, run, parsed.id if parsed else 0, at)
            await uow.commit()
        return True

    async def reject(self, unreadable: UnreadableTask) -> PipelineOutcome:
        """A body that is not a valid ParseTask. Without a task_id: UNREADABLE (the consumer
        dead-letters it). With one: FAILED INVALID_TASK_CONTEXT (or the redelivery rule when
        that task_id already ran)."""
        task_id, reason = unreadable.task_id, unreadable.reason
        if task_id is None:
            return PipelineOutcome(OutcomeKind.UNREADABLE, None, reason)
        identity = unreadable.identity(task_id)
        existing = await self._settle_existing(identity)
        if existing is not None:
            return existing
        try:
            await self._reject(
                identity,
                _rejected(reason, unreadable),
                FailureCode.INVALID_TASK_CONTEXT,
                reason,
            )
        except DuplicateTaskId:
            settled = await self._settle_existing(identity)
            if settled is None:
                raise
            return settled
        return PipelineOutcome(OutcomeKind.REJECTED, task_id, reason)

    async def fail_internal(self, task_id: str, detail: str, unreadable: UnreadableTask) -> None:
        """Best effort after an unexpected error: the run ends FAILED INTERNAL_UNKNOWN_ERROR
        (a terminal run keeps its state) and its result is queued. `unreadable` is what the
        consumer salvaged from the body, should no run exist yet. A run of another tenant or
        file under this task_id is not this message's: it is left alone."""
        services = self.services
        code = FailureCode.INTERNAL_UNKNOWN_ERROR
        async with services.uow() as uow:
            at = services.clock.now()
            run = await uow.runs.get(task_id)
            if run is not None and not run.identity.same_file(unreadable.identity(task_id)):
                log.warning("task %s: not recording the failure on another task's run", task_id)
                return
            parsed = await uow.parsed_logs.get(task_id)
            if parsed is None:
                stored = _rejected(detail, unreadable)
                parsed = await uow.parsed_logs.add(task_id, stored, at)
            if run is None:
                run = ParseRun.open(unreadable.identity(task_id), at)
                run.reject(code, detail, at)
                await uow.runs.add(run)
            elif run.is_terminal:
                await self.results.resend_result(uow, run, parsed.id, at)
            else:
                expected = run.version
                run.abort(code, detail, at)
                await uow.runs.save(run, expected)
            await self.results.queue_owed_results(uow, run, parsed.id, at)
            await uow.commit()

    def stages(self) -> list[PipelineStage[Any]]:
        """The declared stages, built from the current services for each run."""
        if self._stages is not None:
            return list(self._stages)
        return default_stages(self.services)

    # -- steps --------------------------------------------------------------------------

    async def _settle_existing(self, identity: TaskIdentity) -> PipelineOutcome | None:
        """The idempotency barrier: a known task_id never runs again
        (docs/design/0001-pipeline-contract.md)."""
        async with self.services.uow() as uow:
            return await self._settle_in(uow, identity)

    async def _settle_in(self, uow: UnitOfWork, identity: TaskIdentity) -> PipelineOutcome | None:
        """The barrier inside an open unit of work: None when task_id is unknown (nothing
        written); DUPLICATE (nothing written, nothing of the stored run said) when the
        stored run is another tenant's or file's; otherwise the redelivery is settled and
        committed."""
        task_id = identity.task_id
        run = await uow.runs.get(task_id)
        if run is None:
            return None
        if not run.identity.same_file(identity):
            log.warning("task %s: task_id already used by another task; dead-lettered", task_id)
            self.services.metrics.redelivered(OutcomeKind.DUPLICATE.value)
            return PipelineOutcome(OutcomeKind.DUPLICATE, task_id, duplicate_task(task_id))
        parsed = await uow.parsed_logs.get(task_id)
        parsed_log_id = parsed.id if parsed is not None else 0
        at = self.services.clock.now()
        if run.is_terminal:
            kind = OutcomeKind.RESENT
            await self.results.resend_result(uow, run, parsed_log_id, at)
        else:
            expected = run.version
            run.converge_interrupted(at)
            await uow.runs.save(run, expected)
            kind = OutcomeKind.INTERRUPTED
            await self.results.queue_owed_results(uow, run, parsed_log_id, at)
        await uow.commit()
        log.info("task %s redelivered: %s", task_id, kind.value)
        self.services.metrics.redelivered(kind.value)
        return PipelineOutcome(kind, task_id, run.pipeline_status.value)

    async def _open(
        self, identity: TaskIdentity, task: ParseTaskCommand, source: MarkdownLocation
    ) -> tuple[ParseRun, int] | PipelineOutcome:
        """The barrier and the new run in one unit of work (a small file otherwise paid a
        unit of work just to learn its task_id is new)."""
        async with self.services.uow() as uow:
            settled = await self._settle_in(uow, identity)
            if settled is not None:
                return settled
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(identity.task_id, task, at, source=source)
            run = ParseRun.open(identity, at)
            await uow.runs.add(run)
            await self._label(uow, task)
            await uow.commit()
        return run, parsed.id

    @staticmethod
    async def _label(uow: UnitOfWork, task: ParseTaskCommand) -> None:
        """A producer's new task with metadata stores it, in the unit of work that accepts
        the task (once: a redelivery finds the run); the indexing stages copy it onto the
        points. Retries and re-indexes are not new tasks here, so they never undo a PUT."""
        if task.metadata is None or task.issued_by is not TaskIssuer.PRODUCER:
            return
        scope = document_scope(task)
        stored = await uow.documents.metadata_of(scope)
        version = stored.version if stored is not None else 0
        if not await uow.documents.put_metadata(scope, task.metadata, expected_version=version):
            log.info("task %s: the document's metadata changed meanwhile; kept", task.task_id)

    async def _reject(
        self, identity: TaskIdentity, stored: StoredTask, code: FailureCode, detail: str
    ) -> None:
        async with self.services.uow() as uow:
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(identity.task_id, stored, at)
            run = ParseRun.open(identity, at)
            run.reject(code, detail, at)
            await uow.runs.add(run)
            await self.results.queue_owed_results(uow, run, parsed.id, at)
            await uow.commit()

    async def _open_retry(
        self, task: ParseTaskCommand, identity: TaskIdentity
    ) -> tuple[ParseRun, int] | PipelineOutcome:
        """Invariant 6 of docs/design/0002-run-state-machine.md in ONE unit of work: check,
        supersede by rowcount, derive, add."""
        previous_id = task.previous_task_id
        if previous_id is None:  # the wire format requires it when is_retry
            raise ValueError(f"retry task {task.task_id} names no previous_task_id")
        async with self.services.uow() as uow:
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(
                task.task_id, task, at, previous_id, source=task_source(task)
            )
            previous = await uow.runs.get(previous_id)
            if previous is not None and not Caller.tenant(identity.user_id).may_act_for(
                previous.identity.user_id
            ):
                previous = None  # another tenant's run is, to this task, no run at all
            refusal = retry_refusal(previous, task.task_id)
            if refusal is None and previous is not None:
                mismatch = previous.retry_mismatch(identity)
                if mismatch is not None:
                    run = ParseRun.open(identity, at)
                    run.reject(FailureCode.INVALID_TASK_CONTEXT, mismatch, at)
                    await uow.runs.add(run)
                    await self.results.queue_owed_results(uow, run, parsed.id, at)
                    await uow.commit()
                    return PipelineOutcome(OutcomeKind.REJECTED, task.task_id, mismatch)
                if await uow.runs.mark_superseded(previous_id, task.task_id):
                    previous.supersede(task.task_id)
                    run = previous.derive_retry(task.task_id, at)
                    await uow.runs.add(run)
                    await uow.commit()
                    return run, parsed.id
                refusal = RetryRefusal.CONCURRENT_SUPERSEDE
            assert refusal is not None  # retry_refusal always says why  # nosec B101
            loser = ParseRun.retry_loser(identity, previous_id, refusal, at)
            await uow.runs.add(loser)
            await self.results.queue_owed_results(uow, loser, parsed.id, at)
            await uow.commit()
        return PipelineOutcome(OutcomeKind.RETRY_REFUSED, task.task_id, refusal.value)
