"""TaskConsumer: bad messages never crash it; ack only after the outcome is committed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from ragline.adapters.inbound.task_consumer import SupervisedConsumer
from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.ports.messaging import MessageBusError
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.tasks import RejectedBody, TaskStatus
from ragline.domain.parse_run import FailureCode, FailurePoint, PipelineStatus
from ragline.testing.parse_run import check_run
from tests.fakes.harness import Harness, encode_task
from tests.fakes.messaging import FakeDelivery, FakeTaskSource


class CheckingDelivery(FakeDelivery):
    """Records, at ack time, whether the task's result was already committed."""

    def __init__(self, body: bytes, h: Harness, task_id: str) -> None:
        super().__init__(body)
        self.h, self.task_id = h, task_id
        self.committed_at_ack: bool | None = None

    async def ack(self) -> None:
        run = self.h.db.runs.get(self.task_id)
        self.committed_at_ack = (
            run is not None and run.is_terminal and self.task_id in self.h.db.outbox
        )
        await super().ack()


async def test_valid_task_is_acked_after_terminal_state_and_outbox_commit(h: Harness) -> None:
    task = h.task()
    delivery = CheckingDelivery(encode_task(task), h, task.task_id)
    outcome = await h.consumer.process(delivery)
    assert outcome is not None and outcome.kind is OutcomeKind.RAN
    assert delivery.acked and delivery.committed_at_ack is True


async def test_unreadable_body_without_task_id_is_dead_lettered(h: Harness) -> None:
    for body in (b"\xff\xfe not json", b"[1, 2, 3]", b'{"no_task_id": 1}', b""):
        delivery = FakeDelivery(body)
        outcome = await h.consumer.process(delivery)
        assert outcome is not None and outcome.kind is OutcomeKind.UNREADABLE
        assert not delivery.acked and delivery.dead_letter_reason
    assert h.db.runs == {} and h.db.outbox == {}


async def test_invalid_fields_with_a_task_id_get_a_failed_invalid_context_result(
    h: Harness,
) -> None:
    body = json.dumps(
        {"task_id": "bad-1", "original_file_id": 5, "user_id": 7, "dataset_id": "three"}
    ).encode()
    delivery = FakeDelivery(body)
    outcome = await h.consumer.process(delivery)
    assert outcome is not None and outcome.kind is OutcomeKind.REJECTED
    assert delivery.acked
    run = h.db.runs["bad-1"]
    check_run(run)
    assert run.failed_stage is FailurePoint.TASK_VALIDATION
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INVALID_TASK_CONTEXT
    result = h.result("bad-1")
    assert result.task_status is TaskStatus.FAILED
    assert (result.original_file_id, result.user_id, result.dataset_id) == (5, 7, 0)
    # the same bad message again is a redelivery, not a second run
    again = FakeDelivery(body)
    outcome = await h.consumer.process(again)
    assert outcome is not None and outcome.kind is OutcomeKind.RESENT
    assert len(h.db.runs) == 1


async def test_an_id_past_a_long_is_rejected_and_not_echoed(h: Harness) -> None:
    """The FAILED answer carries only the ids a result can hold (issue 18)."""
    body = json.dumps(
        {"task_id": "wide-1", "original_file_id": 2**64, "user_id": 7, "dataset_id": 3}
    ).encode()
    outcome = await h.consumer.process(FakeDelivery(body))
    assert outcome is not None and outcome.kind is OutcomeKind.REJECTED
    result = h.result("wide-1")
    assert result.task_status is TaskStatus.FAILED
    assert (result.original_file_id, result.user_id, result.dataset_id) == (0, 7, 3)
    assert result.failure_reason is not None and "original_file_id" in result.failure_reason


async def test_oversize_message_with_a_task_id_is_answered(h: Harness) -> None:
    body = b'{"task_id": "big-1", "pad": "' + b"x" * 2_000_000 + b'"}'
    delivery = FakeDelivery(body)
    outcome = await h.consumer.process(delivery)
    assert outcome is not None and outcome.kind is OutcomeKind.REJECTED and delivery.acked
    assert h.result("big-1").failure_reason.startswith("INVALID_TASK_CONTEXT:oversize")  # type: ignore[union-attr]
    stored = h.db.parsed_logs["big-1"].task
    assert isinstance(stored, RejectedBody) and len(stored.body_text) < 20_000


async def test_exception_escaping_the_pipeline_fails_internal_then_dead_letters(
    h: Harness,
) -> None:
    h.faults.arm_after("uow.runs.save", PersistenceError("connection lost"), 3)
    task = h.task()
    delivery = FakeDelivery(encode_task(task))
    assert await h.consumer.process(delivery) is None
    assert not delivery.acked
    assert delivery.dead_letter_reason is not None
    assert delivery.dead_letter_reason.startswith("INTERNAL_UNKNOWN_ERROR:")
    run = h.run(task.task_id)
    check_run(run)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INTERNAL_UNKNOWN_ERROR
    assert h.result(task.task_id).task_status is TaskStatus.FAILED
    assert h.db.locked == 0


async def test_exception_before_the_run_exists_still_answers(h: Harness) -> None:
    h.faults.arm("uow.runs.add", PersistenceError("db down"))
    task = h.task()
    delivery = FakeDelivery(encode_task(task))
    assert await h.consumer.process(delivery) is None
    assert delivery.dead_letter_reason is not None
    run = h.run(task.task_id)
    check_run(run)
    assert run.failed_stage is FailurePoint.TASK_VALIDATION
    assert h.result(task.task_id).user_id == 7


async def test_when_even_the_fallback_fails_the_message_is_dead_lettered(h: Harness) -> None:
    h.faults.arm("uow.runs.add", PersistenceError("db down"), times=None)
    delivery = FakeDelivery(encode_task(h.task()))
    assert await h.consumer.process(delivery) is None
    assert delivery.dead_letter_reason is not None and h.db.runs == {}


async def test_run_cleans_the_workspace_then_consumes_every_delivery(h: Harness) -> None:
    h.workspace.root.mkdir(parents=True)
    (h.workspace.root / "leftover.pdf").write_bytes(b"old")
    tasks = [h.task(), h.task(upload=False)]
    deliveries = [FakeDelivery(encode_task(t)) for t in tasks] + [FakeDelivery(b"{")]
    stop = asyncio.Event()
    source = IdleSource(deliveries)
    supervised = SupervisedConsumer(h.pipeline, h.wire, lambda: source)
    running = asyncio.create_task(supervised.run(stop))
    await asyncio.wait_for(source.idle.wait(), 30)  # one at a time: every earlier one is done
    stop.set()
    await supervised.close()
    await asyncio.wait_for(running, 5)
    assert [d.acked for d in deliveries] == [True, True, False]
    assert deliveries[2].dead_letter_reason is not None
    assert h.workspace.leftovers() == []


async def test_a_lost_ack_is_survived_and_the_redelivery_resends(h: Harness) -> None:
    class LostAck(FakeDelivery):
        async def ack(self) -> None:
            raise MessageBusError("connection reset")

    task = h.task()
    outcome = await h.consumer.process(LostAck(encode_task(task)))
    assert outcome is not None and outcome.kind is OutcomeKind.RAN
    again = FakeDelivery(encode_task(task))
    outcome = await h.consumer.process(again)
    assert outcome is not None and outcome.kind is OutcomeKind.RESENT and again.acked


class BrokenSource(FakeTaskSource):
    """Yields its deliveries, then fails as a lost connection does."""

    async def _iterate(self) -> AsyncIterator[FakeDelivery]:
        async for delivery in super()._iterate():
            yield delivery
        raise MessageBusError("connection reset by broker")


class IdleSource(FakeTaskSource):
    """Yields its deliveries, then waits for more until closed (`idle` says it got there)."""

    def __init__(self, deliveries: list[FakeDelivery]) -> None:
        super().__init__(deliveries)
        self.idle = asyncio.Event()

    async def _iterate(self) -> AsyncIterator[FakeDelivery]:
        async for delivery in super()._iterate():
            yield delivery
        self.idle.set()
        while not self.closed:
            await asyncio.sleep(0.01)


async def test_a_lost_task_source_is_reopened_and_consuming_goes_on(h: Harness) -> None:
    first, second = h.task(), h.task()
    before = FakeDelivery(encode_task(first))
    after = FakeDelivery(encode_task(second))
    sources: list[FakeTaskSource] = [BrokenSource([before]), IdleSource([after])]
    opened: list[FakeTaskSource] = []

    def open_source() -> FakeTaskSource:
        opened.append(sources.pop(0))
        return opened[-1]

    stop = asyncio.Event()
    supervised = SupervisedConsumer(h.pipeline, h.wire, open_source, first_backoff=0.01)
    running = asyncio.create_task(supervised.run(stop))
    idle = sources[1]
    assert isinstance(idle, IdleSource)
    await asyncio.wait_for(idle.idle.wait(), 30)  # reopened, and `after` handled before idling
    stop.set()
    await supervised.close()
    await asyncio.wait_for(running, 5)
    assert before.acked and after.acked
    assert supervised.reconnects == 1 and len(opened) == 2
    assert all(source.closed for source in opened)
    assert h.db.runs[first.task_id].pipeline_status is PipelineStatus.SUCCESS
    assert h.db.runs[second.task_id].pipeline_status is PipelineStatus.SUCCESS


async def test_stop_ends_a_supervised_consumer_waiting_for_deliveries(h: Harness) -> None:
    source = IdleSource([])
    stop = asyncio.Event()
    supervised = SupervisedConsumer(h.pipeline, h.wire, lambda: source, first_backoff=0.01)
    running = asyncio.create_task(supervised.run(stop))
    await asyncio.wait_for(source.idle.wait(), 5)  # consuming, with nothing to deliver
    assert not running.done()
    stop.set()
    await supervised.close()
    await asyncio.wait_for(running, 5)
    assert source.closed and supervised.reconnects == 0
