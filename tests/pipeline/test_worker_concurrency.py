"""`Worker(concurrency=N)` on the real brokers: N tasks of one routing key (one Kafka
partition, one RabbitMQ queue) run at once, never more, and every one is settled.

The probe holds each task until N are inside the pipeline together: with fewer really in
flight (a prefetch of 1, a loop awaiting each task) the gate never opens and the test fails
on its timeout; a bound not kept shows as a maximum above N.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pika
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from ragline.adapters.inbound.task_consumer import SupervisedConsumer, Worker
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outcome import OutcomeKind, PipelineOutcome
from ragline.application.ports.messaging import MessageBus
from ragline.application.tasks import ParseTaskCommand, TaskStatus
from ragline.bootstrap.factories import message_bus
from ragline.bootstrap.settings import Settings
from tests.fakes.harness import Harness

CONCURRENCY = 4
TASKS = 2 * CONCURRENCY
WAIT_SECONDS = 180.0  # a bound for a hang only: tansu's group join alone can take 20 s


class InFlightProbe(ParseTaskPipeline):
    """The real pipeline (on fakes), counting the tasks inside it at once."""

    def __init__(self, pipeline: ParseTaskPipeline, gate_at: int) -> None:
        super().__init__(pipeline.services)
        self.inside = 0
        self.most_inside = 0
        self.gate_at = gate_at
        self.gate = asyncio.Event()
        self.outcomes: list[OutcomeKind] = []

    async def handle(self, task: ParseTaskCommand) -> PipelineOutcome:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        if self.inside >= self.gate_at:
            self.gate.set()
        try:
            await self.gate.wait()
            outcome = await super().handle(task)
            self.outcomes.append(outcome.kind)
            return outcome
        finally:
            self.inside -= 1


def _settings(vendor: str, tmp_path: Path, bootstrap: str) -> Settings:
    suffix = uuid.uuid4().hex[:8]
    return Settings(
        data_dir=tmp_path / "data",
        mq_vendor=vendor,
        parse_task_topic=f"conc-tasks-{suffix}",
        parse_result_topic=f"conc-results-{suffix}",
        kafka_bootstrap_servers=bootstrap,
        kafka_group_id=f"conc-workers-{suffix}",
    )


async def _all_answered(h: Harness, task_ids: set[str]) -> None:
    async with asyncio.timeout(WAIT_SECONDS):
        while not task_ids <= set(h.db.outbox):
            await asyncio.sleep(0.05)


def _kafka_committed(settings: Settings) -> dict[int, int | None]:
    """Per partition of the task topic that holds records: the group's committed offset."""

    async def read() -> dict[int, int | None]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=settings.kafka.bootstrap_servers,
            group_id=settings.kafka.group_id,
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            topic = settings.parse_task_topic
            tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
            ends = await consumer.end_offsets(tps)
            return {tp.partition: await consumer.committed(tp) for tp in tps if ends[tp]}
        finally:
            await consumer.stop()

    return asyncio.run(read())


def _rabbit_queue_depth(queue: str) -> tuple[int, int]:
    connection = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672))
    try:
        method = connection.channel().queue_declare(queue, passive=True).method
        return method.message_count, method.consumer_count
    finally:
        connection.close()


async def _run(h: Harness, bus: MessageBus) -> InFlightProbe:
    probe = InFlightProbe(h.pipeline, gate_at=CONCURRENCY)
    tasks = [  # distinct documents: runs of one document supersede each other
        h.task("pdf", original_file_id=100 + i, source_object_key=f"files/doc-{i}.pdf")
        for i in range(TASKS)
    ]
    source: Any = bus.task_source()
    if hasattr(source, "declare"):  # RabbitMQ: the deploy step declaring the queue
        await source.declare()
    await source.close()
    publisher: Any = bus.task_publisher()
    for task in tasks:  # one routing key: one partition / one queue
        await publisher.publish(h.wire.encode_task(task), task.file_type)
    await publisher.close()
    worker = Worker(probe, h.wire, bus, h.relay, consumers=1, concurrency=CONCURRENCY)
    async with worker.running():
        await _all_answered(h, {t.task_id for t in tasks})
        await asyncio.sleep(0.5)  # the last acks/commits go out after the outbox commit
    for task in tasks:
        assert h.result(task.task_id).task_status is TaskStatus.SUCCESS
    return probe


@pytest.mark.parametrize("vendor", ["kafka", "rabbitmq"])
def test_one_worker_runs_n_tasks_of_one_partition_at_once(
    vendor: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    bootstrap = request.getfixturevalue("kafka_bootstrap") if vendor == "kafka" else ""
    settings = _settings(vendor, tmp_path, bootstrap or "127.0.0.1:9092")
    h = Harness(tmp_path)
    h.configure_embedding()
    probe = asyncio.run(_run(h, message_bus(settings)))
    assert probe.most_inside == CONCURRENCY, "never more, and really that many, at once"
    assert len(h.db.runs) == TASKS
    assert probe.outcomes == [OutcomeKind.RAN] * TASKS  # each ran once, none delivered twice
    if vendor == "kafka":
        committed = _kafka_committed(settings)
        assert list(committed.values()) == [TASKS]  # one partition, every offset committed
    else:
        depth, consumers = _rabbit_queue_depth(f"{settings.parse_task_topic}.workers")
        assert (depth, consumers) == (0, 0)  # all acked, the consumer gone


async def _stop_mid_batch(h: Harness, bus: MessageBus) -> InFlightProbe:
    """Stop (as SIGTERM does) while CONCURRENCY tasks are held inside the pipeline; they
    are let go only after the stop, and must still be settled on the open source."""
    probe = InFlightProbe(h.pipeline, gate_at=TASKS + 1)  # the gate opens only by hand
    tasks = [
        h.task("pdf", original_file_id=100 + i, source_object_key=f"files/doc-{i}.pdf")
        for i in range(TASKS)
    ]
    source: Any = bus.task_source()
    if hasattr(source, "declare"):
        await source.declare()
    await source.close()
    publisher: Any = bus.task_publisher()
    for task in tasks:
        await publisher.publish(h.wire.encode_task(task), task.file_type)
    await publisher.close()
    consumer = SupervisedConsumer(
        probe, h.wire, partial(bus.task_source, in_flight=CONCURRENCY), concurrency=CONCURRENCY
    )
    stop = asyncio.Event()
    running = asyncio.create_task(consumer.run(stop))
    async with asyncio.timeout(WAIT_SECONDS):
        while probe.inside < CONCURRENCY:
            await asyncio.sleep(0.05)
    stop.set()
    await consumer.close()  # what Worker does on leaving
    probe.gate.set()
    await asyncio.wait_for(running, WAIT_SECONDS)
    return probe


@pytest.mark.parametrize("vendor", ["kafka", "rabbitmq"])
def test_a_stop_lets_the_tasks_in_flight_settle_and_fetches_no_more(
    vendor: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    bootstrap = request.getfixturevalue("kafka_bootstrap") if vendor == "kafka" else ""
    settings = _settings(vendor, tmp_path, bootstrap or "127.0.0.1:9092")
    h = Harness(tmp_path)
    h.configure_embedding()
    probe = asyncio.run(_stop_mid_batch(h, message_bus(settings)))
    assert probe.outcomes == [OutcomeKind.RAN] * CONCURRENCY  # no task taken after the stop
    if vendor == "kafka":
        assert list(_kafka_committed(settings).values()) == [CONCURRENCY]
    else:
        depth, consumers = _rabbit_queue_depth(f"{settings.parse_task_topic}.workers")
        assert (depth, consumers) == (TASKS - CONCURRENCY, 0)  # the held ones were acked
