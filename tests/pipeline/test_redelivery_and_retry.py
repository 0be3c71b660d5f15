"""Idempotent redelivery and the retry branch (docs/design/0001-pipeline-contract.md idempotency,
invariant 6 of docs/design/0002-run-state-machine.md)."""

from __future__ import annotations

import asyncio

import pytest

from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.tasks import TaskStatus
from ragline.domain.parse_run import (
    FailureCode,
    FailurePoint,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
    RetryRefusal,
    Stage,
    StageStatus,
)
from ragline.testing.parse_run import check_family, check_run
from tests.fakes.harness import Harness


class Crash(BaseException):
    """The process dies: nothing in the pipeline catches a BaseException."""


async def test_redelivered_terminal_run_resends_its_result_without_running(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    await h.relay.relay_once()
    sent = h.db.outbox[task.task_id]
    assert sent.status == "SENT"
    calls, version = len(h.parser.calls), h.run(task.task_id).version
    outcome = await h.pipeline.handle(task)
    assert outcome.kind is OutcomeKind.RESENT
    assert len(h.parser.calls) == calls and h.run(task.task_id).version == version
    row = h.db.outbox[task.task_id]
    assert row.status == "PENDING" and row.body == sent.body and row.id == sent.id
    await h.relay.relay_once()
    assert [key for key, _ in h.publisher.published] == [task.task_id] * 2
    assert h.publisher.published[0] == h.publisher.published[1]


async def test_redelivered_failed_run_resends_the_failure(h: Harness) -> None:
    task = h.task(upload=False)
    await h.pipeline.handle(task)
    body = h.db.outbox[task.task_id].body
    assert (await h.pipeline.handle(task)).kind is OutcomeKind.RESENT
    assert h.db.outbox[task.task_id].body == body
    assert len(h.db.runs) == 1


@pytest.mark.parametrize("stage", list(Stage), ids=lambda s: s.value)
async def test_redelivered_interrupted_run_converges_to_interrupted_task(
    h: Harness, stage: Stage
) -> None:
    # the process dies while `stage` is PROCESSING (its success is never saved); saves: the
    # start of CLEANING, then one per success (which also starts the next stage)
    h.faults.arm_after("uow.runs.save", Crash(), stage.position + 1)
    task = h.task()
    with pytest.raises(Crash):
        await h.pipeline.handle(task)
    stored = h.run(task.task_id)
    assert stored.stages[stage].status is StageStatus.PROCESSING
    assert task.task_id not in h.db.outbox
    outcome = await h.pipeline.handle(task)
    assert outcome.kind is OutcomeKind.INTERRUPTED
    run = h.run(task.task_id)
    check_run(run)
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INTERRUPTED_TASK
    assert run.failed_stage is FailurePoint.of(stage) and run.recover_from_stage is stage
    assert run.failure_reason.code.recoverable
    assert h.result(task.task_id).task_status is TaskStatus.FAILED
    retry = h.retry_of(task)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).pipeline_status is PipelineStatus.SUCCESS


async def test_run_created_but_never_started_converges_too(h: Harness) -> None:
    h.faults.arm("uow.runs.save", Crash())
    task = h.task()
    with pytest.raises(Crash):
        await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.PENDING
    assert (await h.pipeline.handle(task)).kind is OutcomeKind.INTERRUPTED
    run = h.run(task.task_id)
    check_run(run)
    assert run.recover_from_stage is Stage.CLEANING


async def test_two_racing_retries_one_wins_the_loser_gets_its_own_failed_run(
    h: Harness,
) -> None:
    h.faults.arm("keywords.write", RuntimeError("es down"))
    first = h.task()
    await h.pipeline.handle(first)
    h.faults.disarm()
    a, b = h.retry_of(first), h.retry_of(first)
    before = h.run(first.task_id)
    outcomes = await asyncio.gather(h.pipeline.handle(a), h.pipeline.handle(b))
    kinds = sorted(o.kind.value for o in outcomes)
    assert kinds == ["ran", "retry_refused"]
    (loser,) = [o for o in outcomes if o.kind is OutcomeKind.RETRY_REFUSED]
    assert loser.detail == RetryRefusal.CONCURRENT_SUPERSEDE.value  # decided by the rowcount
    winner_id = next(o.task_id for o in outcomes if o.kind is OutcomeKind.RAN)
    assert winner_id is not None and loser.task_id is not None
    old = h.run(first.task_id)
    assert old.superseded_by_task_id == winner_id
    assert (old.stages, old.failure_reason) == (before.stages, before.failure_reason)
    lost = h.run(loser.task_id)
    check_run(lost)
    assert lost.failed_stage is FailurePoint.RETRY_VALIDATION
    assert lost.failure_reason is not None
    assert lost.failure_reason.text == "RETRY_VALIDATION_FAILED:concurrent_supersede"
    assert not any(st.inherited for st in lost.stages.values())
    assert h.run(winner_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.result(loser.task_id).task_status is TaskStatus.FAILED
    assert h.result(winner_id).task_status is TaskStatus.SUCCESS
    check_family(h.db.runs)
    assert len(h.db.outbox) == 3
    assert h.db.locked == 0


async def _failed_first(h: Harness):  # type: ignore[no-untyped-def]
    h.faults.arm("tokenizer.tokenize", RuntimeError("x"))
    first = h.task()
    await h.pipeline.handle(first)
    h.faults.disarm()
    return first


async def test_retry_of_an_unknown_run_is_refused(h: Harness) -> None:
    first = h.task()  # never handled
    retry = h.retry_of(first)
    outcome = await h.pipeline.handle(retry)
    assert outcome.kind is OutcomeKind.RETRY_REFUSED
    assert outcome.detail == RetryRefusal.PREVIOUS_NOT_FOUND.value
    assert h.result(retry.task_id).failure_reason == ("RETRY_VALIDATION_FAILED:previous_not_found")


async def test_retry_of_a_successful_run_is_refused(h: Harness) -> None:
    first = h.task()
    await h.pipeline.handle(first)
    outcome = await h.pipeline.handle(h.retry_of(first))
    assert outcome.detail == RetryRefusal.PREVIOUS_NOT_FAILED.value


async def test_second_retry_of_an_already_superseded_run_is_refused(h: Harness) -> None:
    first = await _failed_first(h)
    await h.pipeline.handle(h.retry_of(first))
    late = h.retry_of(first)
    outcome = await h.pipeline.handle(late)
    assert outcome.detail == RetryRefusal.ALREADY_SUPERSEDED.value
    check_family(h.db.runs)


async def test_retry_without_markdown_coordinates_is_refused(h: Harness) -> None:
    first = await _failed_first(h)
    stored = h.run(first.task_id)
    h.db.runs[first.task_id] = ParseRun(
        identity=stored.identity,
        created_at=stored.created_at,
        stages=stored.stages,
        pipeline_status=stored.pipeline_status,
        failed_stage=stored.failed_stage,
        recover_from_stage=stored.recover_from_stage,
        failure_reason=stored.failure_reason,
        started_at=stored.started_at,
        finished_at=stored.finished_at,
        markdown=None,
        version=stored.version,
    )
    outcome = await h.pipeline.handle(h.retry_of(first))
    assert outcome.detail == RetryRefusal.MARKDOWN_MISSING.value
    assert h.run(first.task_id).superseded_by_task_id is None


async def test_retry_for_another_document_is_invalid_context(h: Harness) -> None:
    first = await _failed_first(h)
    retry = h.retry_of(first, original_file_id=999)
    outcome = await h.pipeline.handle(retry)
    assert outcome.kind is OutcomeKind.REJECTED
    assert h.run(first.task_id).superseded_by_task_id is None
    run = h.run(retry.task_id)
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INVALID_TASK_CONTEXT
    check_family(h.db.runs)


async def test_retry_inherits_markdown_coordinates_with_cleaning(h: Harness) -> None:
    first = await _failed_first(h)
    retry = h.retry_of(first)
    await h.pipeline.handle(retry)
    assert h.run(retry.task_id).markdown == MarkdownLocation("markdown", first.md_object_key)
