"""Commands on a ParseRun as values, plus an independent model of what each one must do.

The model (`expected_error`, `expected_after`) restates docs/design/0002-run-state-machine.md
without reusing the aggregate's code, so the state machine can compare the real aggregate against
it.
"""

from __future__ import annotations

import copy
from datetime import datetime

import attrs

from ragline.domain.parse_run import (
    STAGE_ORDER,
    FailureCode,
    FailurePoint,
    FailureReason,
    IllegalStageTransition,
    MarkdownCoordinatesRequired,
    MarkdownLocation,
    NotAnInheritedStage,
    ParseRun,
    PipelineStatus,
    RejectAfterStart,
    RetryNotAllowed,
    RetryRefusal,
    RunAlreadyTerminal,
    RunEvent,
    RunFailed,
    RunSucceeded,
    Stage,
    StageOrderViolation,
    StageState,
    StageStatus,
)

SUCCESS = StageStatus.SUCCESS


@attrs.frozen
class Start:
    stage: Stage

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.start_stage(self.stage, at)


@attrs.frozen
class Succeed:
    stage: Stage
    duration_ms: int
    markdown: MarkdownLocation | None

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.succeed_stage(self.stage, at, self.duration_ms, self.markdown)


@attrs.frozen
class Fail:
    stage: Stage
    code: FailureCode
    detail: str
    duration_ms: int | None

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.fail_stage(self.stage, self.code, self.detail, at, self.duration_ms)


@attrs.frozen
class Skip:
    stage: Stage

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.skip_inherited_stage(self.stage, at)


@attrs.frozen
class Reject:
    code: FailureCode
    detail: str

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.reject(self.code, self.detail, at)


@attrs.frozen
class Converge:
    detail: str

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.converge_interrupted(at, self.detail)


@attrs.frozen
class Supersede:
    by_task_id: str

    def apply(self, run: ParseRun, at: datetime) -> None:
        run.supersede(self.by_task_id)


Command = Start | Succeed | Fail | Skip | Reject | Converge | Supersede


def _status(run: ParseRun, stage: Stage) -> StageStatus:
    return run.stages[stage].status


def _first_not_success(run: ParseRun) -> Stage | None:
    return next((s for s in STAGE_ORDER if _status(run, s) is not SUCCESS), None)


def expected_error(run: ParseRun, command: Command) -> type[Exception] | None:
    """The error docs/design/0002-run-state-machine.md demands for `command` on `run` (ValueError
    for a negative duration), or None when the move is legal."""
    if isinstance(command, Supersede):
        needs_markdown = run.stages[Stage.CLEANING].status is SUCCESS
        if (
            run.pipeline_status is not PipelineStatus.FAILED
            or run.superseded_by_task_id is not None
            or command.by_task_id == run.identity.task_id
            or (needs_markdown and run.markdown is None)
        ):
            return RetryNotAllowed
        return None
    if run.pipeline_status in (PipelineStatus.SUCCESS, PipelineStatus.FAILED):
        return RunAlreadyTerminal
    if isinstance(command, Start):
        if _status(run, command.stage) is not StageStatus.PENDING:
            return IllegalStageTransition
        earlier = STAGE_ORDER[: STAGE_ORDER.index(command.stage)]
        if any(_status(run, s) is not SUCCESS for s in earlier):
            return StageOrderViolation
        return None
    if isinstance(command, Succeed | Fail):
        if _status(run, command.stage) is not StageStatus.PROCESSING:
            return IllegalStageTransition
        if isinstance(command, Succeed) and command.duration_ms < 0:
            return ValueError
        if isinstance(command, Succeed) and (command.stage is Stage.CLEANING) is (
            command.markdown is None
        ):
            return MarkdownCoordinatesRequired
        return None
    if isinstance(command, Skip):
        state = run.stages[command.stage]
        return None if state.inherited and state.status is SUCCESS else NotAnInheritedStage
    if isinstance(command, Reject):
        return None if run.pipeline_status is PipelineStatus.PENDING else RejectAfterStart
    if _first_not_success(run) is None:
        return IllegalStageTransition
    return None


def expected_refusal(previous: ParseRun, new_task_id: str) -> RetryRefusal | None:
    """Invariant 6 of docs/design/0002-run-state-machine.md restated: why `new_task_id` may not
    retry `previous` (first rule broken)."""
    if previous.identity.task_id == new_task_id:
        return RetryRefusal.SAME_TASK_ID
    if previous.pipeline_status is not PipelineStatus.FAILED:
        return RetryRefusal.PREVIOUS_NOT_FAILED
    if previous.superseded_by_task_id is not None:
        return RetryRefusal.ALREADY_SUPERSEDED
    if previous.stages[Stage.CLEANING].status is SUCCESS and previous.markdown is None:
        return RetryRefusal.MARKDOWN_MISSING
    return None


def _fail(run: ParseRun, point: FailurePoint, reason: FailureReason, at: datetime) -> None:
    run.pipeline_status = PipelineStatus.FAILED
    run.failed_stage = point
    run.recover_from_stage = _first_not_success(run)
    run.failure_reason = reason
    run.finished_at = at


def _begin(run: ParseRun, at: datetime) -> None:
    if run.pipeline_status is PipelineStatus.PENDING:
        run.pipeline_status = PipelineStatus.PROCESSING
        run.started_at = at


def expected_after(
    run: ParseRun, command: Command, at: datetime
) -> tuple[ParseRun, list[RunEvent]]:
    """The run a legal `command` must leave, and the events it must record."""
    after = copy.deepcopy(run)
    after.pull_events()
    after.version = run.version + 1
    task_id = run.identity.task_id
    events: list[RunEvent] = []
    stages = after.stages
    if isinstance(command, Start):
        stages[command.stage] = StageState(StageStatus.PROCESSING, started_at=at)
        _begin(after, at)
        after.failed_stage = after.recover_from_stage = after.failure_reason = None
    elif isinstance(command, Succeed):
        old = stages[command.stage]
        stages[command.stage] = StageState(
            SUCCESS, old.started_at, at, command.duration_ms, old.inherited
        )
        if command.markdown is not None:
            after.markdown = command.markdown
        if command.stage is STAGE_ORDER[-1]:
            after.pipeline_status = PipelineStatus.SUCCESS
            after.finished_at = at
            events.append(RunSucceeded(task_id, at))
    elif isinstance(command, Fail):
        old = stages[command.stage]
        stages[command.stage] = StageState(
            StageStatus.FAILED, old.started_at, at, command.duration_ms, old.inherited
        )
        reason = FailureReason.of(command.code, command.detail)
        _fail(after, FailurePoint(command.stage.value), reason, at)
        events.append(RunFailed(task_id, at, reason))
    elif isinstance(command, Skip):
        _begin(after, at)
        if command.stage is STAGE_ORDER[-1]:
            after.pipeline_status = PipelineStatus.SUCCESS
            after.finished_at = at
            events.append(RunSucceeded(task_id, at))
    elif isinstance(command, Reject):
        reason = FailureReason.of(command.code, command.detail)
        _fail(after, FailurePoint.TASK_VALIDATION, reason, at)
        events.append(RunFailed(task_id, at, reason))
    elif isinstance(command, Converge):
        running = [s for s in STAGE_ORDER if _status(run, s) is StageStatus.PROCESSING]
        for stage in running:
            old = stages[stage]
            stages[stage] = StageState(
                StageStatus.FAILED, old.started_at, at, old.duration_ms, old.inherited
            )
        point_stage = running[0] if running else _first_not_success(run)
        assert point_stage is not None
        reason = FailureReason.of(FailureCode.INTERRUPTED_TASK, command.detail)
        _fail(after, FailurePoint(point_stage.value), reason, at)
        events.append(RunFailed(task_id, at, reason))
    else:
        after.superseded_by_task_id = command.by_task_id
    return after, events
