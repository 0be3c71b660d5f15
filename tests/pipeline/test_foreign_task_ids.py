"""A task_id is a redelivery only for the same tenant's same file (docs/security.md,
Existence and ids). A message reusing another task's task_id is DUPLICATE_TASK:
dead-lettered, the stored run untouched, its result not resent, nothing of it disclosed.
A retry naming another tenant's run is refused exactly like one naming no run."""

from __future__ import annotations

import json
import re

import pytest

from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.tasks import ParseTaskCommand, UnreadableTask
from ragline.domain.parse_run import ParseRun, PipelineStatus, RetryRefusal, Stage, StageStatus
from tests.fakes.harness import Harness, encode_result
from tests.fakes.messaging import FakeDelivery

ALICE, BOB = 7, 8


def _snapshot(h: Harness, task_id: str) -> tuple[object, ...]:
    row = h.db.outbox.get(task_id)
    return (
        h.run(task_id),
        h.run(task_id).version,
        None if row is None else (row.id, row.status, row.result),
        len(h.publisher.published),
    )


@pytest.mark.parametrize(
    "foreign",
    [{"user_id": BOB}, {"dataset_id": 99}, {"original_file_id": 999}],
    ids=["another tenant", "another dataset", "another file"],
)
async def test_a_foreign_message_with_a_finished_runs_task_id_is_dead_lettered(
    h: Harness, foreign: dict[str, int]
) -> None:
    alices = h.task()
    await h.pipeline.handle(alices)
    await h.relay.relay_once()
    before = _snapshot(h, alices.task_id)
    parsed = len(h.parser.calls)
    intruder = h.task(task_id=alices.task_id, **foreign)
    delivery = h.delivery(intruder)
    outcome = await h.consumer.process(delivery)
    assert outcome is not None and outcome.kind is OutcomeKind.DUPLICATE
    assert not delivery.acked
    assert delivery.dead_letter_reason == (
        f"DUPLICATE_TASK:task_id {alices.task_id} is already used by another task"
    )
    await h.relay.relay_once()
    assert _snapshot(h, alices.task_id) == before  # not resent, not touched
    assert len(h.parser.calls) == parsed and len(h.db.runs) == 1


async def test_a_foreign_message_never_converges_a_run_in_flight(h: Harness) -> None:
    alices = h.task()
    h.db.runs[alices.task_id] = _opened(h, alices)
    before = _snapshot(h, alices.task_id)
    outcome = await h.pipeline.handle(h.task(task_id=alices.task_id, user_id=BOB))
    assert outcome.kind is OutcomeKind.DUPLICATE
    assert _snapshot(h, alices.task_id) == before
    assert h.run(alices.task_id).pipeline_status is PipelineStatus.PENDING
    # Alice's own redelivery still converges it
    assert (await h.pipeline.handle(alices)).kind is OutcomeKind.INTERRUPTED


def _opened(h: Harness, task: ParseTaskCommand) -> ParseRun:
    """The run of `task` as a worker that died right after opening it left it."""
    return ParseRun.open(task.identity, h.clock.now())


async def test_an_unreadable_body_with_a_foreign_task_id_is_dead_lettered(h: Harness) -> None:
    alices = h.task()
    await h.pipeline.handle(alices)
    before = _snapshot(h, alices.task_id)
    body = json.dumps({"task_id": alices.task_id, "user_id": BOB, "file_type": 3}).encode()
    delivery = FakeDelivery(body, "txt")
    outcome = await h.consumer.process(delivery)
    assert outcome is not None and outcome.kind is OutcomeKind.DUPLICATE
    assert delivery.dead_letter_reason is not None
    assert delivery.dead_letter_reason.startswith("DUPLICATE_TASK:")
    assert _snapshot(h, alices.task_id) == before


async def test_an_internal_error_of_a_foreign_message_leaves_the_run_alone(h: Harness) -> None:
    alices = h.task()
    await h.pipeline.handle(alices)
    await h.relay.relay_once()
    before = _snapshot(h, alices.task_id)
    salvaged = UnreadableTask(task_id=alices.task_id, reason="boom", user_id=BOB)
    await h.pipeline.fail_internal(alices.task_id, "boom", salvaged)
    await h.relay.relay_once()
    assert _snapshot(h, alices.task_id) == before  # its result not queued again


async def test_the_own_redelivery_is_still_resent(h: Harness) -> None:
    alices = h.task()
    await h.pipeline.handle(alices)
    assert (await h.pipeline.handle(alices)).kind is OutcomeKind.RESENT


def _normalised(body: bytes, *task_ids: str) -> str:
    text = body.decode()
    for task_id in task_ids:
        text = text.replace(task_id, "<id>")
    text = re.sub(r'"parse_finished_at": ?"[^"]+"', '"parse_finished_at": "<t>"', text)
    return re.sub(r'"document_parsed_log_id": ?\d+', '"document_parsed_log_id": 0', text)


@pytest.mark.parametrize("state", ["failed", "succeeded", "superseded", "in flight"])
async def test_a_retry_naming_another_tenants_run_is_answered_as_one_naming_no_run(
    h: Harness, state: str
) -> None:
    h.configure_embedding(user_id=BOB)
    if state == "in flight":
        alices = h.task()
        h.db.runs[alices.task_id] = _opened(h, alices)
    else:
        if state != "succeeded":
            h.faults.arm("tokenizer.tokenize", RuntimeError("x"))
        alices = h.task()
        await h.pipeline.handle(alices)
        h.faults.disarm()
        if state == "superseded":
            await h.pipeline.handle(h.retry_of(alices))
    before = _snapshot(h, alices.task_id)
    bobs = h.task(user_id=BOB, original_file_id=100)
    into_alices = h.retry_of(bobs, previous_task_id=alices.task_id)
    into_nothing = h.retry_of(bobs, previous_task_id="no-such-task")
    first = await h.pipeline.handle(into_alices)
    second = await h.pipeline.handle(into_nothing)
    assert first.kind is second.kind is OutcomeKind.RETRY_REFUSED
    assert first.detail == second.detail == RetryRefusal.PREVIOUS_NOT_FOUND.value
    a, b = h.run(into_alices.task_id), h.run(into_nothing.task_id)
    assert (a.failure_reason, a.failed_stage, a.stages) == (
        b.failure_reason,
        b.failed_stage,
        b.stages,
    )
    assert a.stages[Stage.CLEANING].status is StageStatus.PENDING
    assert _normalised(encode_result(h.db.outbox[a.task_id].result), a.task_id) == _normalised(
        encode_result(h.db.outbox[b.task_id].result), b.task_id
    )
    assert _snapshot(h, alices.task_id) == before
