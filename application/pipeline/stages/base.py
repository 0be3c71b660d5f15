"""The one Stage template (docs/design/0001-pipeline-contract.md).

skip when inherited SUCCESS -> `skip_inherited_stage`; otherwise `start_stage` (saved with a
version compare-and-set) -> `run` -> `succeed_stage` | `fail_stage(code)`. Whenever a
transition makes the run terminal, its result goes into the outbox in the same unit of work.
No stage writes a status any other way.

What a stage hands the stages after it is its typed output (`gives`), returned by `run`
and stored in the run's `StageOutputs`; what it reads of earlier stages is declared in
`takes` and is all it can read (outputs.py). Its failure code comes from the declaration
in domain/parse_run/stage.py.

A success also starts the stage the orchestrator runs next when that one is PENDING, in the
same unit of work (`RunContext.following` / `started_ahead`): "N done, N+1 started" is one
commit, so a run saves seven times instead of twelve, and a crash right after it leaves what
a crash right after a separate start of N+1 would.

The transition that makes a run SUCCESS also swaps its chunk lineage in (same unit of work,
`chunks.swap_lineage`); after the commit the old lineages' children leave each index in ONE
delete call per index. A run that fails leaves the live lineage as it was.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import ClassVar, Generic, TypeVar

from ragline.application.error_text import StageFailure, describe, without_paths
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.log_context import log_fields
from ragline.application.pipeline.outputs import StageInputs, Takes
from ragline.application.pipeline.results import ResultOutbox
from ragline.application.pipeline.stages.needs import TemplateNeeds
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.search.spaces import dense_indexes
from ragline.domain.parse_run import (
    FailureCode,
    MarkdownLocation,
    PipelineStatus,
    Stage,
    StageStatus,
)

log = logging.getLogger("ragline.pipeline")

Remove = Callable[[str, str, list[str]], Awaitable[object]]
"""A delete of chunks from one index (user_id, dataset_id, chunk ids)."""

ExtraWrite = Callable[[UnitOfWork], Awaitable[None]]
Out = TypeVar("Out")


def _duration_ms(started: datetime | None, finished: datetime) -> int:
    if started is None:
        return 0
    return max(0, int((finished - started).total_seconds() * 1000))


class PipelineStage(abc.ABC, Generic[Out]):
    """A stage: subclasses say which stage they are, what they take and give, do the work
    in `run`, and raise StageFailure(code, detail) for a known failure. Any other exception
    from the work is recorded as the stage's declared failure code; a PersistenceError
    escapes (the consumer handles it)."""

    stage: ClassVar[Stage]
    gives: ClassVar[type | None] = None
    """The type of what `run` returns for the stages after it (None: nothing)."""
    takes: ClassVar[tuple[Takes, ...]] = ()
    """The earlier outputs `run` may read, each with what it does when one is absent."""

    def __init__(self, services: TemplateNeeds) -> None:
        self.services = services
        settings = services.settings
        self.results = ResultOutbox(
            topic=settings.result_topic,
            language=settings.language,
            metrics=services.metrics,
        )

    @property
    def failure_code(self) -> FailureCode:
        """The code of a failure the work did not name (declared with the stage)."""
        return self.stage.failure_code

    @abc.abstractmethod
    async def run(self, ctx: RunContext, inputs: StageInputs) -> Out:
        """Do the stage's work; return its output (an instance of `gives`, or None)."""

    def markdown_of(self, output: Out) -> MarkdownLocation | None:
        """Where the run's Markdown is, when this stage's success records it (CLEANING)."""
        return None

    async def on_skip(self, ctx: RunContext) -> None:
        """Prepare what later stages need when this stage is skipped as inherited."""
        return None

    async def on_success(self, uow: UnitOfWork, ctx: RunContext, output: Out) -> None:
        """Extra writes committed together with this stage's success."""
        return None

    async def execute(self, ctx: RunContext) -> None:
        """The template; afterwards the run is saved and, if terminal, its result is queued."""
        attributes = {"ragline.task_id": ctx.task_id, "ragline.stage": self.stage.value}
        with (
            log_fields(stage=self.stage.value),
            self.services.tracing.span("ragline.stage", attributes),
        ):
            await self._execute(ctx)

    async def _execute(self, ctx: RunContext) -> None:
        run, stage = ctx.run, self.stage
        state = run.stages[stage]
        if state.status is StageStatus.SUCCESS and state.inherited:
            await self.on_skip(ctx)
            await self._transition(ctx, lambda at: run.skip_inherited_stage(stage, at))
            return
        if ctx.started_ahead is stage and state.status is StageStatus.PROCESSING:
            ctx.started_ahead = None  # its predecessor's success started it
        else:
            await self._transition(ctx, lambda at: run.start_stage(stage, at))
        started = run.stages[stage].started_at
        try:
            output = await self.run(ctx, ctx.outputs.view(self.takes))
        except StageFailure as failure:
            code, detail = failure.code, failure.detail
        except PersistenceError:
            raise
        except Exception as error:  # the stage's work failed in a way it did not name
            code, detail = self.failure_code, describe(error)
        else:
            self._check_gives(output)
            markdown = self.markdown_of(output)
            following = ctx.following
            if following is None or run.status_of(following) is not StageStatus.PENDING:
                following = None

            def succeed(at: datetime) -> None:
                run.succeed_stage(stage, at, _duration_ms(started, at), markdown)
                if following is not None:  # saves the next stage a unit of work of its own
                    run.start_stage(following, at)

            async def with_success(uow: UnitOfWork) -> None:
                await self.on_success(uow, ctx, output)

            await self._transition(ctx, succeed, with_success)
            if output is not None:
                ctx.outputs.put(output)
            ctx.started_ahead = following
            self._report(ctx)
            return
        detail = without_paths(detail)  # what a caller reads says what, never where
        await self._transition(
            ctx, lambda at: run.fail_stage(stage, code, detail, at, _duration_ms(started, at))
        )
        self._report(ctx)

    def _check_gives(self, output: Out) -> None:
        """A stage gives exactly what it declared (a bug, not a failure of the run)."""
        if output is not None and type(output) is not self.gives:
            raise TypeError(f"{self.stage.value} gave {type(output).__name__}, not its `gives`")

    def _report(self, ctx: RunContext) -> None:
        state = ctx.run.stages[self.stage]
        seconds = (state.duration_ms or 0) / 1000
        self.services.metrics.stage_finished(self.stage.value, state.status.value, seconds)
        reason = ctx.run.failure_reason if state.status is StageStatus.FAILED else None
        log.info(
            "stage %s %s in %d ms%s",
            self.stage.value,
            state.status.value,
            state.duration_ms or 0,
            f": {reason.text}" if reason is not None else "",
            extra={"duration_ms": state.duration_ms or 0, "status": state.status.value},
        )

    async def _transition(
        self,
        ctx: RunContext,
        command: Callable[[datetime], None],
        extra: ExtraWrite | None = None,
    ) -> None:
        """Apply one domain command and store it (version CAS) in one unit of work, with the
        result in the outbox when the run just became terminal."""
        services, run = self.services, ctx.run
        removed: list[str] = []
        async with services.uow() as uow:
            at = services.clock.now()
            expected = run.version
            was_success = run.pipeline_status is PipelineStatus.SUCCESS
            command(at)
            if extra is not None:
                await extra(uow)  # not Django's extra()  # nosec B610
            now_success = run.pipeline_status is PipelineStatus.SUCCESS and not was_success
            if now_success and run.touched_index:
                removed = await uow.chunks.swap_lineage(ctx.scope, ctx.task_id)
            await uow.runs.save(run, expected)
            await self.results.queue_owed_results(uow, run, ctx.parsed_log_id, at)
            await uow.commit()
        if removed:
            await self._remove_old_lineages(ctx, removed)

    async def _remove_old_lineages(self, ctx: RunContext, removed: list[str]) -> None:
        """The old version's children out of every index, one call per index (the rows are
        gone, so a failed delete only leaves entries search can no longer hydrate)."""
        scope, services = ctx.scope, self.services
        removals: list[tuple[str, Remove]] = [
            ("keywords", services.keywords.retire_chunks),  # rides the index's next commit
        ]
        try:  # the base index and the user's active and shadow generations
            indexes = await dense_indexes(services.uow, services.vectors, scope.user_id)
            removals += [("vectors", index.delete_chunks) for index in indexes]
        except Exception as error:
            log.warning("finding the user's vector indexes failed: %s", describe(error))
        for name, remove in removals:
            try:
                await remove(scope.user_id, scope.dataset_id, removed)
            except Exception as error:  # the run succeeded; orphans are never shown
                log.warning("removing the old lineage from %s failed: %s", name, describe(error))
