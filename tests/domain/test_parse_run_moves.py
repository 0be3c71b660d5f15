"""Each command of ParseRun: the legal move, and every illegal move with the rule it names."""

from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given

from ragline.domain.parse_run import (
    LAST_STAGE,
    STAGE_ORDER,
    DomainError,
    FailureCode,
    FailurePoint,
    FailureReason,
    IllegalStageTransition,
    MarkdownCoordinatesRequired,
    MarkdownLocation,
    NotAnInheritedStage,
    NotTerminal,
    ParseRun,
    PipelineStatus,
    RejectAfterStart,
    RetryNotAllowed,
    RetryRefusal,
    RunAlreadyTerminal,
    RunFailed,
    RunSucceeded,
    Stage,
    StageOrderViolation,
    StageState,
    StageStatus,
    TaskIdentity,
    retry_refusal,
    terminal_result,
)
from ragline.testing.parse_run import check_run, reachable_runs

T0 = datetime(2026, 3, 1, tzinfo=UTC)
MD = MarkdownLocation("md-bucket", "md/doc.md")


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def identity(task_id: str = "t1") -> TaskIdentity:
    return TaskIdentity(task_id, "f1", "dpt1", "u1", "d1", "pdf")


def run_until(stage: Stage) -> ParseRun:
    """A run whose stages before `stage` succeeded and `stage` is PROCESSING."""
    run = ParseRun.open(identity(), at(0))
    for index, done in enumerate(STAGE_ORDER[: stage.position]):
        run.start_stage(done, at(2 * index + 1))
        run.succeed_stage(
            done, at(2 * index + 2), 10 + index, MD if done is Stage.CLEANING else None
        )
    run.start_stage(stage, at(100))
    return run


def failed_at(stage: Stage) -> ParseRun:
    run = run_until(stage)
    run.fail_stage(stage, FailureCode.VECTORIZING_FAILED, "boom", at(101), 7)
    run.pull_events()
    return run


def assert_refused(run: ParseRun, error: type[DomainError], move: object) -> None:
    before = attrs.evolve(run, stages=dict(run.stages))
    with pytest.raises(error) as caught:
        move()  # type: ignore[operator]
    assert error.rule in str(caught.value)
    assert run == before and run.pending_events == ()


def test_open_is_pending_without_events() -> None:
    run = ParseRun.open(identity(), at(0))
    assert run.pipeline_status is PipelineStatus.PENDING
    assert all(state == StageState() for state in run.stages.values())
    assert run.version == 0 and run.pull_events() == [] and run.next_stage is Stage.CLEANING


def test_first_start_moves_pipeline_and_later_starts_do_not_move_started_at() -> None:
    run = run_until(Stage.CHUNKING)
    assert run.pipeline_status is PipelineStatus.PROCESSING
    assert run.started_at == at(1)
    assert run.stages[Stage.CHUNKING] == StageState(StageStatus.PROCESSING, started_at=at(100))
    assert run.stages[Stage.CLEANING].duration_ms == 10 and run.markdown == MD
    assert run.version == 3 and run.pull_events() == []


def test_start_refuses_out_of_order_and_repeated_starts() -> None:
    run = ParseRun.open(identity(), at(0))
    assert_refused(run, StageOrderViolation, lambda: run.start_stage(Stage.CHUNKING, at(1)))
    run = run_until(Stage.CHUNKING)
    assert_refused(run, IllegalStageTransition, lambda: run.start_stage(Stage.CHUNKING, at(1)))
    assert_refused(run, IllegalStageTransition, lambda: run.start_stage(Stage.CLEANING, at(1)))
    assert_refused(run, StageOrderViolation, lambda: run.start_stage(LAST_STAGE, at(1)))


def test_start_clears_only_failure_traces() -> None:
    run = run_until(Stage.CHUNKING)
    run.succeed_stage(Stage.CHUNKING, at(101), 5)
    run.failed_stage = FailurePoint.CHUNKING  # as a row left by an older writer might hold
    run.recover_from_stage = Stage.CHUNKING
    run.failure_reason = FailureReason.of(FailureCode.INTERRUPTED_TASK, "old")
    run.start_stage(Stage.VECTORIZING, at(102))
    assert run.failed_stage is None and run.recover_from_stage is None
    assert run.failure_reason is None
    assert run.stages[Stage.CHUNKING].status is StageStatus.SUCCESS


def test_succeed_requires_processing_and_markdown_only_for_cleaning() -> None:
    run = ParseRun.open(identity(), at(0))
    assert_refused(
        run, IllegalStageTransition, lambda: run.succeed_stage(Stage.CLEANING, at(1), 1, MD)
    )
    run.start_stage(Stage.CLEANING, at(1))
    assert_refused(
        run, MarkdownCoordinatesRequired, lambda: run.succeed_stage(Stage.CLEANING, at(2), 1)
    )
    with pytest.raises(ValueError):
        run.succeed_stage(Stage.CLEANING, at(2), -1, MD)
    run.succeed_stage(Stage.CLEANING, at(2), 0, MD)
    run.start_stage(Stage.CHUNKING, at(3))
    assert_refused(
        run, MarkdownCoordinatesRequired, lambda: run.succeed_stage(Stage.CHUNKING, at(4), 1, MD)
    )


def test_last_success_finishes_with_one_event() -> None:
    run = run_until(LAST_STAGE)
    run.succeed_stage(LAST_STAGE, at(200), 3)
    assert run.pipeline_status is PipelineStatus.SUCCESS and run.finished_at == at(200)
    assert run.pull_events() == [RunSucceeded("t1", at(200))]
    assert run.pull_events() == []
    result = terminal_result(run, "en")
    assert (result.task_status, result.failure_reason, result.finished_at) == (
        "success",
        None,
        at(200),
    )
    assert_refused(run, RunAlreadyTerminal, lambda: run.start_stage(Stage.CLEANING, at(1)))


def test_fail_stage_records_the_failure_and_is_final() -> None:
    run = run_until(Stage.PRETOKENIZE)
    run.fail_stage(Stage.PRETOKENIZE, FailureCode.PRETOKENIZE_FAILED, "plan: empty", at(150), 9)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failed_stage is FailurePoint.PRETOKENIZE
    assert run.recover_from_stage is Stage.PRETOKENIZE
    assert run.failure_reason is not None
    assert run.failure_reason.text == "PRETOKENIZE_FAILED:plan: empty"
    assert run.stages[Stage.PRETOKENIZE] == StageState(
        StageStatus.FAILED, at(100), at(150), 9, False
    )
    assert run.finished_at == at(150)
    [event] = run.pull_events()
    assert event == RunFailed("t1", at(150), run.failure_reason)
    result = terminal_result(run)
    assert result.task_status == "failed"
    assert result.user_message == FailureCode.PRETOKENIZE_FAILED.user_message("zh")
    assert_refused(
        run,
        RunAlreadyTerminal,
        lambda: run.fail_stage(Stage.PRETOKENIZE, FailureCode.CHUNKING_FAILED, "", at(1)),
    )
    assert_refused(run, RunAlreadyTerminal, lambda: run.converge_interrupted(at(1)))


def test_fail_requires_processing() -> None:
    run = ParseRun.open(identity(), at(0))
    assert_refused(
        run,
        IllegalStageTransition,
        lambda: run.fail_stage(Stage.CLEANING, FailureCode.PARSE_ENGINE_FAILED, "", at(1)),
    )


def test_reject_only_before_any_start() -> None:
    run = ParseRun.open(identity(), at(0))
    run.reject(FailureCode.INVALID_TASK_CONTEXT, "file type mismatch", at(1))
    assert run.failed_stage is FailurePoint.TASK_VALIDATION
    assert run.recover_from_stage is Stage.CLEANING
    assert [type(e) for e in run.pull_events()] == [RunFailed]
    started = run_until(Stage.CLEANING)
    assert_refused(
        started,
        RejectAfterStart,
        lambda: started.reject(FailureCode.INVALID_TASK_CONTEXT, "", at(1)),
    )


def test_converge_interrupted_fails_the_stage_in_flight() -> None:
    run = run_until(Stage.VECTORIZING)
    run.converge_interrupted(at(300))
    assert run.stages[Stage.VECTORIZING].status is StageStatus.FAILED
    assert run.stages[Stage.CHUNKING].status is StageStatus.SUCCESS
    assert run.failed_stage is FailurePoint.VECTORIZING
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INTERRUPTED_TASK
    assert FailureCode.INTERRUPTED_TASK.recoverable
    assert len(run.pull_events()) == 1


def test_converge_between_stages_points_at_the_next_stage() -> None:
    run = run_until(Stage.CHUNKING)
    run.succeed_stage(Stage.CHUNKING, at(101), 1)
    run.converge_interrupted(at(102))
    assert run.failed_stage is FailurePoint.VECTORIZING
    assert run.recover_from_stage is Stage.VECTORIZING
    assert run.stages[Stage.VECTORIZING].status is StageStatus.PENDING
    pending = ParseRun.open(identity(), at(0))
    pending.converge_interrupted(at(1))
    assert pending.failed_stage is FailurePoint.CLEANING


def test_converge_refuses_an_impossible_all_success_live_run() -> None:
    done = StageState(StageStatus.SUCCESS, at(1), at(2), 1)
    run = ParseRun(
        identity(),
        at(0),
        dict.fromkeys(STAGE_ORDER, done),
        PipelineStatus.PROCESSING,
        markdown=MD,
    )
    assert_refused(run, IllegalStageTransition, lambda: run.converge_interrupted(at(3)))


def test_terminal_result_refuses_an_unfinished_run() -> None:
    with pytest.raises(NotTerminal):
        terminal_result(run_until(Stage.CLEANING))
    broken = ParseRun(identity(), at(0), pipeline_status=PipelineStatus.FAILED, finished_at=at(1))
    with pytest.raises(NotTerminal):
        terminal_result(broken)


# -- retry ------------------------------------------------------------------------------


def test_retry_refusals() -> None:
    assert retry_refusal(None, "t2") is RetryRefusal.PREVIOUS_NOT_FOUND
    assert retry_refusal(run_until(Stage.CHUNKING), "t2") is RetryRefusal.PREVIOUS_NOT_FAILED
    failed = failed_at(Stage.CHUNKING)
    assert retry_refusal(failed, "t1") is RetryRefusal.SAME_TASK_ID
    assert retry_refusal(failed, "t2") is None
    no_markdown = attrs.evolve(failed, markdown=None)
    assert retry_refusal(no_markdown, "t2") is RetryRefusal.MARKDOWN_MISSING
    cleaning_failed = attrs.evolve(failed_at(Stage.CLEANING), markdown=None)
    assert retry_refusal(cleaning_failed, "t2") is None
    failed.supersede("t2")
    assert retry_refusal(failed, "t3") is RetryRefusal.ALREADY_SUPERSEDED


def test_supersede_once_only_and_only_failed() -> None:
    run = run_until(Stage.CHUNKING)
    assert_refused(run, RetryNotAllowed, lambda: run.supersede("t2"))
    failed = failed_at(Stage.CHUNKING)
    version = failed.version
    failed.supersede("t2")
    assert failed.superseded_by_task_id == "t2" and failed.version == version + 1
    assert failed.pull_events() == []
    assert_refused(failed, RetryNotAllowed, lambda: failed.supersede("t3"))


def test_derive_retry_inherits_success_and_resets_the_rest() -> None:
    previous = failed_at(Stage.VECTORIZING)
    assert_refused(previous, RetryNotAllowed, lambda: previous.derive_retry("t2", at(400)))
    previous.supersede("t2")
    assert_refused(previous, RetryNotAllowed, lambda: previous.derive_retry("t3", at(400)))
    retry = previous.derive_retry("t2", at(400))
    assert retry.identity == attrs.evolve(previous.identity, task_id="t2")
    assert retry.retry_of_task_id == "t1" and retry.created_at == at(400)
    assert retry.pipeline_status is PipelineStatus.PENDING and retry.version == 0
    assert retry.stages[Stage.CLEANING] == StageState(StageStatus.SUCCESS, None, None, 10, True)
    assert retry.stages[Stage.CHUNKING] == StageState(StageStatus.SUCCESS, None, None, 11, True)
    for stage in STAGE_ORDER[2:]:
        assert retry.stages[stage] == StageState()
    assert retry.markdown == MD and retry.pending_events == ()
    assert retry.superseded_by_task_id is None and retry.failure_reason is None
    check_run(retry)


def test_retry_from_cleaning_drops_markdown_and_inherits_nothing() -> None:
    previous = failed_at(Stage.CLEANING)
    previous.markdown = MD
    previous.supersede("t2")
    retry = previous.derive_retry("t2", at(5))
    assert retry.markdown is None
    assert not any(state.inherited for state in retry.stages.values())


def test_resume_skips_inherited_stages_then_runs_the_rest() -> None:
    previous = failed_at(Stage.CHUNKING)
    previous.supersede("t2")
    retry = previous.derive_retry("t2", at(500))
    assert_refused(
        retry, NotAnInheritedStage, lambda: retry.skip_inherited_stage(Stage.CHUNKING, at(1))
    )
    retry.skip_inherited_stage(Stage.CLEANING, at(501))
    assert retry.pipeline_status is PipelineStatus.PROCESSING and retry.started_at == at(501)
    assert_refused(retry, IllegalStageTransition, lambda: retry.start_stage(Stage.CLEANING, at(1)))
    retry.start_stage(Stage.CHUNKING, at(502))
    assert retry.started_at == at(501)


def test_skipping_an_inherited_last_stage_finishes_the_run() -> None:
    inherited = StageState(StageStatus.SUCCESS, duration_ms=4, inherited=True)
    run = ParseRun(identity(), at(0), dict.fromkeys(STAGE_ORDER, inherited), markdown=MD)
    run.skip_inherited_stage(Stage.CLEANING, at(1))
    assert run.pipeline_status is PipelineStatus.PROCESSING and run.pending_events == ()
    run.skip_inherited_stage(LAST_STAGE, at(2))
    assert run.pipeline_status is PipelineStatus.SUCCESS and run.finished_at == at(2)
    assert run.pull_events() == [RunSucceeded("t1", at(2))]
    assert_refused(run, RunAlreadyTerminal, lambda: run.skip_inherited_stage(LAST_STAGE, at(3)))


def test_retry_loser_is_its_own_failed_run() -> None:
    loser = ParseRun.retry_loser(identity("t3"), "t1", RetryRefusal.CONCURRENT_SUPERSEDE, at(9))
    assert loser.pipeline_status is PipelineStatus.FAILED
    assert loser.failed_stage is FailurePoint.RETRY_VALIDATION
    assert loser.failure_reason is not None
    assert loser.failure_reason.text == "RETRY_VALIDATION_FAILED:concurrent_supersede"
    assert loser.retry_of_task_id == "t1" and loser.recover_from_stage is Stage.CLEANING
    assert loser.finished_at == at(9)
    assert [type(e) for e in loser.pull_events()] == [RunFailed]
    check_run(loser)


# -- rebuilding from rows ------------------------------------------------------------------


def test_stages_must_be_the_six_and_are_kept_in_order() -> None:
    with pytest.raises(ValueError):
        ParseRun(identity(), at(0), {Stage.CLEANING: StageState()})
    shuffled = {stage: StageState() for stage in reversed(STAGE_ORDER)}
    assert list(ParseRun(identity(), at(0), shuffled).stages) == list(STAGE_ORDER)


@given(reachable_runs())
def test_any_reachable_run_rebuilds_from_its_fields(run: ParseRun) -> None:
    check_run(run)
    fields = {a.name: getattr(run, a.name) for a in attrs.fields(ParseRun) if a.init}
    fields["stages"] = {stage: fields["stages"][stage] for stage in reversed(STAGE_ORDER)}
    assert ParseRun(**fields) == run


def test_abort_fails_the_stage_in_flight() -> None:
    run = run_until(Stage.VECTORIZING)
    run.abort(FailureCode.INTERNAL_UNKNOWN_ERROR, "bug", at(200))
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failed_stage is FailurePoint.of(Stage.VECTORIZING)
    assert run.stages[Stage.VECTORIZING].status is StageStatus.FAILED
    assert run.failure_reason == FailureReason.of(FailureCode.INTERNAL_UNKNOWN_ERROR, "bug")
    assert [type(e) for e in run.pending_events] == [RunFailed]
    check_run(run)


def test_abort_rejects_a_run_that_never_started() -> None:
    run = ParseRun.open(identity(), at(0))
    run.abort(FailureCode.INTERNAL_UNKNOWN_ERROR, "bug", at(1))
    assert run.failed_stage is FailurePoint.TASK_VALIDATION
    assert run.pipeline_status is PipelineStatus.FAILED


def test_abort_between_stages_starts_and_fails_the_next_one() -> None:
    run = run_until(Stage.CHUNKING)
    run.succeed_stage(Stage.CHUNKING, at(150), 5)
    run.abort(FailureCode.INTERNAL_UNKNOWN_ERROR, "bug", at(200))
    assert run.failed_stage is FailurePoint.of(Stage.VECTORIZING)
    assert run.stages[Stage.CHUNKING].status is StageStatus.SUCCESS
    assert run.recover_from_stage is Stage.VECTORIZING


def test_abort_refuses_a_terminal_run() -> None:
    run = failed_at(Stage.CLEANING)
    assert_refused(
        run,
        RunAlreadyTerminal,
        lambda: run.abort(FailureCode.INTERNAL_UNKNOWN_ERROR, "bug", at(300)),
    )


def test_a_retry_must_name_the_same_tenant_and_file() -> None:
    run = failed_at(Stage.CLEANING)
    assert run.retry_mismatch(attrs.evolve(identity(), task_id="t2")) is None
    for name in ("user_id", "dataset_id", "original_file_id"):
        other = attrs.evolve(identity(), task_id="t2", **{name: "other"})
        assert run.retry_mismatch(other) == (f"retry {name} other differs from the previous run's")
    assert run.retry_mismatch(attrs.evolve(identity(), file_type="docx")) is None
