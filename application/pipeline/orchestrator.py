"""ParseTaskPipeline: the thin orchestrator of SPEC §3-§4 (seed 000 "薄编排").

It decodes and validates, holds the idempotency barrier (unique task_id), converges
redeliveries, runs the retry branch of SPEC §4.6 in one unit of work, then hands the run to
the six stages. Every terminal state it writes goes into the outbox in the same commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

from ragline.application.pipeline.context import RunContext, document_scope
from ragline.application.pipeline.outcome import OutcomeKind, PipelineOutcome
from ragline.application.pipeline.results import put_result
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages import PipelineStage, default_stages
from ragline.application.pipeline.validation import invalid_context
from ragline.application.ports.unit_of_work import DuplicateTaskId, UnitOfWork
from ragline.contracts.wire import ParseTask, RejectedMessage, decode_parse_task
from ragline.domain.parse_run import (
    FailureCode,
    ParseRun,
    PipelineStatus,
    RetryRefusal,
    StageStatus,
    TaskIdentity,
    retry_refusal,
)

log = logging.getLogger(__name__)

_REJECTED_BODY_KEEP = 8192


def task_identity(task: ParseTask) -> TaskIdentity:
    """Wire ids are ints; the domain keeps them as strings."""
    return TaskIdentity(
        task_id=task.task_id,
        original_file_id=str(task.original_file_id),
        document_parse_task_id=str(task.document_parse_task_id),
        user_id=str(task.user_id),
        dataset_id=str(task.dataset_id),
        file_type=task.file_type,
    )


def salvaged_identity(task_id: str, body: bytes) -> TaskIdentity:
    """Best-effort identity of an unparseable task, so its FAILED result names the file."""
    fields: dict[str, str] = {}
    try:
        document = json.loads(body.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        for name in ("original_file_id", "document_parse_task_id", "user_id", "dataset_id"):
            value = document.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                fields[name] = str(value)
        file_type = document.get("file_type")
        if isinstance(file_type, str):
            fields["file_type"] = file_type[:32]
    return TaskIdentity(
        task_id=task_id,
        original_file_id=fields.get("original_file_id", "0"),
        document_parse_task_id=fields.get("document_parse_task_id", "0"),
        user_id=fields.get("user_id", "0"),
        dataset_id=fields.get("dataset_id", "0"),
        file_type=fields.get("file_type", ""),
    )


def _rejected_payload(reason: str, body: bytes) -> str:
    text = body[:_REJECTED_BODY_KEEP].decode("utf-8", errors="replace")
    return json.dumps({"rejected": reason, "body": text}, ensure_ascii=False)


class ParseTaskPipeline:
    """One ParseTask message -> one terminal run with its result in the outbox."""

    def __init__(
        self,
        services: StageServices,
        stages: Sequence[PipelineStage] | None = None,
    ) -> None:
        self.services = services
        self._stages = stages
        self._started = False

    # -- entry points -------------------------------------------------------------------

    def start_up(self) -> int:
        """Clean the temp workspace (leftovers of a crashed process). Only the first call
        cleans: consumers sharing this pipeline may call it while others already work."""
        if self._started:
            return 0
        self._started = True
        return self.services.workspace.clean()

    async def handle_message(self, body: bytes) -> PipelineOutcome:
        """Decode and handle one message body (never raises for a bad body)."""
        decoded = decode_parse_task(body)
        if isinstance(decoded, RejectedMessage):
            if decoded.task_id is None:
                return PipelineOutcome(OutcomeKind.UNREADABLE, None, decoded.reason)
            return await self.reject_message(decoded.task_id, decoded.reason, body)
        return await self.handle(decoded)

    async def handle(self, task: ParseTask) -> PipelineOutcome:
        """Run one decoded task to its terminal state (or settle its redelivery)."""
        problem = invalid_context(task)
        if problem is not None or task.is_retry:
            existing = await self._settle_existing(task.task_id)
            if existing is not None:
                return existing
        # a valid first attempt meets the idempotency barrier inside `_open`
        identity = task_identity(task)
        payload = task.model_dump_json()
        try:
            if problem is not None:
                await self._reject(identity, payload, FailureCode.INVALID_TASK_CONTEXT, problem)
                return PipelineOutcome(OutcomeKind.REJECTED, task.task_id, problem)
            if task.is_retry:
                opened = await self._open_retry(task, identity, payload)
            else:
                opened = await self._open(identity, payload)
        except DuplicateTaskId:
            # the same task_id was recorded concurrently: it is a redelivery after all
            settled = await self._settle_existing(task.task_id)
            if settled is None:
                raise
            return settled
        if isinstance(opened, PipelineOutcome):
            return opened
        run, parsed_log_id = opened
        ctx = RunContext(task, run, parsed_log_id, document_scope(task))
        try:
            stages = self.stages()
            for position, stage in enumerate(stages):
                later = stages[position + 1 :]
                ctx.following = later[0].stage if later else None
                await stage.execute(ctx)
                if run.is_terminal:
                    break
        finally:
            ctx.discard_keyword_plan()
        return PipelineOutcome(OutcomeKind.RAN, task.task_id, run.pipeline_status.value)

    async def reject_message(self, task_id: str, reason: str, body: bytes) -> PipelineOutcome:
        """A body that is not a valid ParseTask but names its task_id: FAILED
        INVALID_TASK_CONTEXT (or the redelivery rule when that task_id already ran)."""
        existing = await self._settle_existing(task_id)
        if existing is not None:
            return existing
        identity = salvaged_identity(task_id, body)
        try:
            await self._reject(
                identity,
                _rejected_payload(reason, body),
                FailureCode.INVALID_TASK_CONTEXT,
                reason,
            )
        except DuplicateTaskId:
            settled = await self._settle_existing(task_id)
            if settled is None:
                raise
            return settled
        return PipelineOutcome(OutcomeKind.REJECTED, task_id, reason)

    async def fail_internal(self, task_id: str, detail: str, body: bytes = b"") -> None:
        """Best effort after an unexpected error: the run ends FAILED INTERNAL_UNKNOWN_ERROR
        (a terminal run keeps its state) and its result is queued."""
        services = self.services
        code = FailureCode.INTERNAL_UNKNOWN_ERROR
        async with services.uow() as uow:
            at = services.clock.now()
            run = await uow.runs.get(task_id)
            parsed = await uow.parsed_logs.get(task_id)
            if parsed is None:
                parsed = await uow.parsed_logs.add(task_id, _rejected_payload(detail, body), at)
            if run is None:
                run = ParseRun.open(salvaged_identity(task_id, body), at)
                run.reject(code, detail, at)
                await uow.runs.add(run)
            elif not run.is_terminal:
                expected = run.version
                _fail_live(run, code, detail, at)
                await uow.runs.save(run, expected)
            await self._queue(uow, run, parsed.id)
            await uow.commit()

    def stages(self) -> list[PipelineStage]:
        """The six stages, built from the current services for each run."""
        if self._stages is not None:
            return list(self._stages)
        return default_stages(self.services)

    # -- steps --------------------------------------------------------------------------

    async def _queue(self, uow: UnitOfWork, run: ParseRun, parsed_log_id: int) -> None:
        settings = self.services.settings
        await put_result(
            uow,
            run,
            parsed_log_id,
            topic=settings.result_topic,
            language=settings.language,
            at=self.services.clock.now(),
        )

    async def _settle_existing(self, task_id: str) -> PipelineOutcome | None:
        """The idempotency barrier: a known task_id never runs again (SPEC §3)."""
        async with self.services.uow() as uow:
            return await self._settle_in(uow, task_id)

    async def _settle_in(self, uow: UnitOfWork, task_id: str) -> PipelineOutcome | None:
        """The barrier inside an open unit of work: None when task_id is unknown (nothing
        written); otherwise the redelivery is settled and committed."""
        run = await uow.runs.get(task_id)
        if run is None:
            return None
        parsed = await uow.parsed_logs.get(task_id)
        parsed_log_id = parsed.id if parsed is not None else 0
        if run.is_terminal:
            kind = OutcomeKind.RESENT
        else:
            expected = run.version
            run.converge_interrupted(self.services.clock.now())
            await uow.runs.save(run, expected)
            kind = OutcomeKind.INTERRUPTED
        await self._queue(uow, run, parsed_log_id)
        await uow.commit()
        log.info("task %s redelivered: %s", task_id, kind.value)
        return PipelineOutcome(kind, task_id, run.pipeline_status.value)

    async def _open(
        self, identity: TaskIdentity, payload: str
    ) -> tuple[ParseRun, int] | PipelineOutcome:
        """The barrier and the new run in one unit of work (a small file otherwise paid a
        unit of work just to learn its task_id is new)."""
        async with self.services.uow() as uow:
            settled = await self._settle_in(uow, identity.task_id)
            if settled is not None:
                return settled
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(identity.task_id, payload, at)
            run = ParseRun.open(identity, at)
            await uow.runs.add(run)
            await uow.commit()
        return run, parsed.id

    async def _reject(
        self, identity: TaskIdentity, payload: str, code: FailureCode, detail: str
    ) -> None:
        async with self.services.uow() as uow:
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(identity.task_id, payload, at)
            run = ParseRun.open(identity, at)
            run.reject(code, detail, at)
            await uow.runs.add(run)
            await self._queue(uow, run, parsed.id)
            await uow.commit()

    async def _open_retry(
        self, task: ParseTask, identity: TaskIdentity, payload: str
    ) -> tuple[ParseRun, int] | PipelineOutcome:
        """SPEC §4.6 in ONE unit of work: check, supersede by rowcount, derive, add."""
        previous_id = task.previous_task_id
        assert previous_id is not None  # the wire model requires it when is_retry
        async with self.services.uow() as uow:
            at = self.services.clock.now()
            parsed = await uow.parsed_logs.add(task.task_id, payload, at, previous_id)
            previous = await uow.runs.get(previous_id)
            refusal = retry_refusal(previous, task.task_id)
            if refusal is None and previous is not None:
                mismatch = _other_document(previous, identity)
                if mismatch is not None:
                    run = ParseRun.open(identity, at)
                    run.reject(FailureCode.INVALID_TASK_CONTEXT, mismatch, at)
                    await uow.runs.add(run)
                    await self._queue(uow, run, parsed.id)
                    await uow.commit()
                    return PipelineOutcome(OutcomeKind.REJECTED, task.task_id, mismatch)
                if await uow.runs.mark_superseded(previous_id, task.task_id):
                    previous.supersede(task.task_id)
                    run = previous.derive_retry(task.task_id, at)
                    await uow.runs.add(run)
                    await uow.commit()
                    return run, parsed.id
                refusal = RetryRefusal.CONCURRENT_SUPERSEDE
            assert refusal is not None
            loser = ParseRun.retry_loser(identity, previous_id, refusal, at)
            await uow.runs.add(loser)
            await self._queue(uow, loser, parsed.id)
            await uow.commit()
        return PipelineOutcome(OutcomeKind.RETRY_REFUSED, task.task_id, refusal.value)


def _other_document(previous: ParseRun, identity: TaskIdentity) -> str | None:
    """A retry must name the same tenant and file as the run it retries."""
    old = previous.identity
    for name in ("user_id", "dataset_id", "original_file_id"):
        if getattr(old, name) != getattr(identity, name):
            return f"retry {name} {getattr(identity, name)} differs from the previous run's"
    return None


def _fail_live(run: ParseRun, code: FailureCode, detail: str, at: datetime) -> None:
    """End an unfinished run FAILED with `code`, through the domain's own commands."""
    in_flight = [s for s, st in run.stages_in_order() if st.status is StageStatus.PROCESSING]
    if in_flight:
        run.fail_stage(in_flight[0], code, detail, at)
    elif run.pipeline_status is PipelineStatus.PENDING:
        run.reject(code, detail, at)
    else:
        stage = run.next_stage
        assert stage is not None  # a live run has a stage left
        run.start_stage(stage, at)
        run.fail_stage(stage, code, detail, at)
