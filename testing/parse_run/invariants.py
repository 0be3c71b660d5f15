"""Invariants of docs/design/0002-run-state-machine.md as plain checks; each raises
InvariantViolation naming its number.

`check_run` holds for any single stored run, `check_step` for any accepted command
(before -> after), `check_events` for what a run has announced, `check_durable_before_notify`
for the store at the moment of a notification, and `check_family` for a whole store (retry
chains). docs/state-machine.md links each invariant here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragline.domain.parse_run import (
    MAX_FAILURE_REASON_LENGTH,
    STAGE_ORDER,
    FailureCode,
    FailurePoint,
    FailureReason,
    ParseRun,
    PipelineStatus,
    RunEvent,
    RunFailed,
    RunSucceeded,
    Stage,
    StageStatus,
)

P, S, F = StageStatus.PENDING, StageStatus.SUCCESS, StageStatus.FAILED
RUNNING = StageStatus.PROCESSING


class InvariantViolation(AssertionError):
    """An invariant of docs/design/0002-run-state-machine.md does not hold."""


def _require(condition: bool, invariant: int, message: str) -> None:
    if not condition:
        raise InvariantViolation(f"invariant {invariant}: {message}")


def _first_not_success(run: ParseRun) -> Stage | None:
    return next((s for s in STAGE_ORDER if run.stages[s].status is not S), None)


def inv1_stage_order(run: ParseRun) -> None:
    """1. A stage has left PENDING only if every earlier stage is SUCCESS."""
    for i, stage in enumerate(STAGE_ORDER):
        if run.stages[stage].status is not P:
            earlier = STAGE_ORDER[:i]
            _require(
                all(run.stages[e].status is S for e in earlier),
                1,
                f"{stage.value} is {run.stages[stage].status.value} before earlier ones succeeded",
            )


def inv2_pipeline_status(run: ParseRun) -> None:
    """2. pipeline_status agrees with the stages; SUCCESS iff every stage is SUCCESS."""
    statuses = [run.stages[s].status for s in STAGE_ORDER]
    status = run.pipeline_status
    _require((status is PipelineStatus.SUCCESS) == all(x is S for x in statuses), 2, "SUCCESS")
    _require(statuses.count(RUNNING) <= 1, 2, "more than one stage PROCESSING")
    if status is PipelineStatus.PENDING:
        _require(run.started_at is None and run.finished_at is None, 2, "PENDING has times")
        _require(
            all(st.status is P or (st.status is S and st.inherited) for st in run.stages.values()),
            2,
            "PENDING run with a stage that ran",
        )
    if status is PipelineStatus.PROCESSING:
        _require(run.started_at is not None and run.finished_at is None, 2, "PROCESSING times")
        _require(F not in statuses, 2, "PROCESSING run with a FAILED stage")
    if status.is_terminal:
        _require(RUNNING not in statuses, 2, "terminal run with a PROCESSING stage")
        _require(run.finished_at is not None, 2, "terminal run without finished_at")


def inv3_failure_record(run: ParseRun) -> None:
    """3. A FAILED run records where, why and where to recover; others carry no failure."""
    failed = run.pipeline_status is PipelineStatus.FAILED
    statuses = [run.stages[s].status for s in STAGE_ORDER]
    _require(statuses.count(F) <= 1, 3, "more than one FAILED stage")
    if not failed:
        _require(
            run.failed_stage is None
            and run.failure_reason is None
            and run.recover_from_stage is None,
            3,
            "failure traces on a run that is not FAILED",
        )
        _require(F not in statuses, 3, "FAILED stage in a run that is not FAILED")
        _require(run.superseded_by_task_id is None, 6, "superseded run that is not FAILED")
        return
    reason = run.failure_reason
    _require(reason is not None and run.failed_stage is not None, 3, "no reason/failed_stage")
    assert reason is not None and run.failed_stage is not None
    _require(len(reason.text) <= MAX_FAILURE_REASON_LENGTH, 3, "failure_reason too long")
    _require(FailureReason.parse(reason.text) == reason, 3, "failure_reason does not round-trip")
    _require(run.recover_from_stage is _first_not_success(run), 3, "recover_from_stage")
    _require(run.recover_from_stage is not None, 3, "FAILED run with nothing to recover")
    _require(run.finished_at is not None, 3, "FAILED without finished_at")
    stage = run.failed_stage.stage
    if stage is None:
        _require(F not in statuses, 3, "validation failure with a FAILED stage")
        want = (
            FailureCode.RETRY_VALIDATION_FAILED
            if run.failed_stage is FailurePoint.RETRY_VALIDATION
            else None
        )
        _require(want is None or reason.code is want, 3, "RETRY_VALIDATION code")
    elif run.stages[stage].status is not F:
        _require(
            run.stages[stage].status is P and reason.code is FailureCode.INTERRUPTED_TASK,
            3,
            "failed_stage is neither FAILED nor an interrupted PENDING stage",
        )
        _require(stage is run.recover_from_stage, 3, "interrupted point is the recovery point")
    else:
        _require(stage is run.recover_from_stage, 3, "failed stage is the recovery point")


def inv4_stage_records(run: ParseRun) -> None:
    """4. Stage records are coherent: SUCCESS has a duration; inherited means SUCCESS."""
    for stage, state in run.stages.items():
        if state.inherited:
            _require(state.status is S, 4, f"{stage.value} inherited but not SUCCESS")
        if state.status is S:
            _require(
                state.duration_ms is not None and state.duration_ms >= 0, 4, "SUCCESS duration"
            )
        if not state.inherited and state.status is not P:
            _require(state.started_at is not None, 4, f"{stage.value} ran without started_at")
        if state.started_at is not None and state.finished_at is not None:
            _require(state.started_at <= state.finished_at, 4, "stage finished before it started")


def inv6_markdown(run: ParseRun) -> None:
    """6/7. A run whose CLEANING succeeded knows where its Markdown is (retry re-reads it)."""
    if run.stages[Stage.CLEANING].status is S:
        _require(run.markdown is not None, 6, "CLEANING SUCCESS without Markdown coordinates")


def check_run(run: ParseRun) -> None:
    """Every invariant that one stored run must satisfy on its own."""
    inv1_stage_order(run)
    inv2_pipeline_status(run)
    inv3_failure_record(run)
    inv4_stage_records(run)
    inv6_markdown(run)


_PIPELINE_MOVES = {
    (PipelineStatus.PENDING, PipelineStatus.PROCESSING),
    (PipelineStatus.PENDING, PipelineStatus.FAILED),
    (PipelineStatus.PENDING, PipelineStatus.SUCCESS),  # only all inherited: see check_step
    (PipelineStatus.PROCESSING, PipelineStatus.SUCCESS),
    (PipelineStatus.PROCESSING, PipelineStatus.FAILED),
}


def check_step(before: ParseRun, after: ParseRun, last_stage_finished: bool) -> None:
    """Invariants 2, 3 and 4 across one accepted command.

    `last_stage_finished` says the command was the last stage's success or inherited skip,
    the only moves allowed to make the pipeline SUCCESS.
    """
    moved = (before.pipeline_status, after.pipeline_status)
    _require(moved[0] is moved[1] or moved in _PIPELINE_MOVES, 2, f"pipeline moved {moved}")
    if after.pipeline_status is PipelineStatus.SUCCESS and moved[0] is not moved[1]:
        _require(last_stage_finished, 2, "SUCCESS set by something other than the last stage")
    if moved == (PipelineStatus.PENDING, PipelineStatus.SUCCESS):
        # A run that never started can only finish by skipping its last stage when all
        # were inherited; any other PENDING -> SUCCESS skipped PROCESSING.
        _require(
            all(st.inherited and st.status is S for st in before.stages.values()),
            2,
            "PENDING -> SUCCESS without passing PROCESSING",
        )
    if before.is_terminal:
        same = [
            before.stages == after.stages,
            before.failure_reason == after.failure_reason,
            before.finished_at == after.finished_at,
            before.recover_from_stage == after.recover_from_stage,
        ]
        _require(all(same), 3, "a terminal run changed (automatic retry?)")
    changed = [s for s in STAGE_ORDER if before.stages[s].status is not after.stages[s].status]
    _require(len(changed) <= 1, 4, f"one command moved several stages {changed}")
    for stage in STAGE_ORDER:
        if before.stages[stage].status is S:
            _require(before.stages[stage] == after.stages[stage], 4, f"{stage.value} SUCCESS lost")
    _require(before.identity == after.identity, 4, "identity changed")
    _require(before.retry_of_task_id == after.retry_of_task_id, 6, "retry_of changed")
    if before.superseded_by_task_id is not None:
        _require(before.superseded_by_task_id == after.superseded_by_task_id, 6, "superseded twice")
    _require(after.version == before.version + 1, 4, "version must grow by one per command")


def check_events(run: ParseRun, announced: Sequence[RunEvent]) -> None:
    """5. A run has announced exactly one terminal event if terminal, none otherwise."""
    if not run.is_terminal:
        _require(not announced, 5, f"event before terminal: {announced}")
        return
    _require(len(announced) == 1, 5, f"{len(announced)} terminal events for {run.task_id}")
    event = announced[0]
    _require(event.task_id == run.task_id and event.at == run.finished_at, 5, "event mismatch")
    if run.pipeline_status is PipelineStatus.SUCCESS:
        _require(isinstance(event, RunSucceeded), 5, "SUCCESS run announced a failure")
    else:
        _require(
            isinstance(event, RunFailed) and event.reason == run.failure_reason,
            5,
            "FAILED run announced something else",
        )


def check_durable_before_notify(stored: ParseRun | None, run: ParseRun) -> None:
    """5. At the moment a terminal event is published, the store already holds the run
    terminal, at least as new as the run that recorded the event."""
    _require(stored is not None, 5, f"{run.task_id} notified before it was stored")
    assert stored is not None
    _require(
        stored.is_terminal and stored.version >= run.version,
        5,
        f"{run.task_id} notified before its terminal state was durable "
        f"(stored {stored.pipeline_status.value} v{stored.version}, event of v{run.version})",
    )


def check_family(runs: Mapping[str, ParseRun]) -> None:
    """6 and 7 across a store: one winner per superseded run, inheriting exactly its
    SUCCESS stages; losers are FAILED at RETRY_VALIDATION and inherit nothing."""
    winners: dict[str, str] = {}
    for run in runs.values():
        if run.superseded_by_task_id is not None:
            _require(run.pipeline_status is PipelineStatus.FAILED, 6, "superseded non-FAILED")
            winner = runs.get(run.superseded_by_task_id)
            _require(winner is not None, 6, "superseded by a run that does not exist")
            assert winner is not None
            _require(winner.retry_of_task_id == run.task_id, 6, "winner does not point back")
        previous_id = run.retry_of_task_id
        if previous_id is None:
            _require(
                not any(st.inherited for st in run.stages.values()), 7, "inherits from nothing"
            )
            continue
        previous = runs.get(previous_id)
        if previous is not None and previous.superseded_by_task_id == run.task_id:
            _require(previous_id not in winners, 6, "two winners")
            winners[previous_id] = run.task_id
            _check_inheritance(previous, run)
        else:
            _require(
                run.failed_stage is FailurePoint.RETRY_VALIDATION
                and not any(st.inherited for st in run.stages.values()),
                6,
                f"retry {run.task_id} neither won nor failed RETRY_VALIDATION",
            )


def _check_inheritance(previous: ParseRun, retry: ParseRun) -> None:
    for stage in STAGE_ORDER:
        old, new = previous.stages[stage], retry.stages[stage]
        if old.status is S:
            _require(
                new.inherited and new.status is S and new.duration_ms == old.duration_ms,
                6,
                f"{stage.value} SUCCESS not inherited with its duration",
            )
        else:
            _require(not new.inherited, 6, f"{stage.value} inherited without SUCCESS")
    if previous.stages[Stage.CLEANING].status is S:
        _require(retry.markdown == previous.markdown, 7, "resume lost the old Markdown")
