"""Issue 19 item 1: a database outage holds the backlog instead of dead-lettering it.

Before: every delivery taken during the outage was dead-lettered ("open unit of work
failed") and most had no run row, so nothing ever answered them. Now the consumer leaves the
delivery on the broker, stops fetching, probes the database with backoff and resumes when it
answers; only the message's own fault is dead-lettered."""

from __future__ import annotations

import asyncio

from ragline.adapters.inbound.task_consumer import SupervisedConsumer
from ragline.application.ports.repositories.errors import DatabaseUnavailable, PersistenceError
from ragline.contracts.wire.topics import dead_letter_topic
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness, encode_task
from tests.fakes.messaging import FakeBus, FakeBusSource, FakeDelivery

TOPIC = "tasks"


async def until(condition: object, what: str) -> None:
    """Wait (bounded by the caller's wait_for) until `condition()` holds."""
    while not condition():  # type: ignore[operator]
        await asyncio.sleep(0.01)


async def test_a_database_outage_leaves_the_backlog_on_the_broker_and_it_is_answered_after(
    h: Harness,
) -> None:
    bus = FakeBus()
    tasks = [
        h.task(
            original_file_id=100 + n,
            source_object_key=f"files/doc-{n}.txt",
            md_object_key=f"md/doc-{n}.md",
        )
        for n in range(20)
    ]
    for task in tasks:
        await bus.append(TOPIC, encode_task(task), task.file_type, {})
    h.faults.arm("uow.runs.get", DatabaseUnavailable("open unit of work failed"), times=None)
    opened: list[FakeBusSource] = []

    def open_source() -> FakeBusSource:
        opened.append(FakeBusSource(bus, TOPIC, "workers"))
        return opened[-1]

    supervised = SupervisedConsumer(
        h.pipeline, h.wire, open_source, concurrency=2, first_backoff=0.01, max_backoff=0.05
    )
    stop = asyncio.Event()
    running = asyncio.create_task(supervised.run(stop))
    try:
        await asyncio.wait_for(until(lambda: h.faults.hits["uow.runs.get"] >= 5, "probes"), 30)
        assert supervised.held_for == "database"
        taken = [d for source in opened for d in source.deliveries]
        assert len(taken) <= 2 * len(opened), "deliveries were taken while the database was away"
        h.faults.disarm()  # the database answers again
        await asyncio.wait_for(
            until(
                lambda: all(t.task_id in h.db.runs and h.run(t.task_id).is_terminal for t in tasks),
                "answers",
            ),
            60,
        )
    finally:
        stop.set()
        await supervised.close()
        await asyncio.wait_for(running, 10)
    assert bus.records(dead_letter_topic(TOPIC)) == [], "a task was dead-lettered for the outage"
    failed = [
        h.run(t.task_id).failure_reason
        for t in tasks
        if h.run(t.task_id).pipeline_status is not PipelineStatus.SUCCESS
    ]
    assert failed == []
    assert {t.task_id for t in tasks} <= set(h.db.outbox), "a task has no result owed"
    assert supervised.holds >= 1 and supervised.held_for is None


async def test_a_store_error_that_is_no_outage_is_still_dead_lettered(h: Harness) -> None:
    h.faults.arm("uow.runs.get", PersistenceError("deadlock"), times=None)
    delivery = FakeDelivery(encode_task(h.task()))
    assert await h.consumer.process(delivery) is None
    assert delivery.dead_letter_reason is not None


async def test_a_database_outage_leaves_the_delivery_unsettled(h: Harness) -> None:
    h.faults.arm("uow.runs.get", DatabaseUnavailable("connection refused"), times=None)
    delivery = FakeDelivery(encode_task(h.task()))
    try:
        await h.consumer.process(delivery)
    except DatabaseUnavailable as outage:
        assert outage.dependency == "database"
    else:
        raise AssertionError("the outage did not reach the supervisor")
    assert not delivery.acked and delivery.dead_letter_reason is None
