"""Issue 19 item 2: a retry leaves nothing on the broker that makes every result routable.

`ragline retry` / `POST /runs/{id}/retry` used to read the retry's answer from a durable
`ragline.results.<uuid>` queue bound with "#" (kept 10 minutes): while it existed, a result
no business queue was bound for was routable, so the outbox marked it SENT and nobody got
it. The retry now reads its run's state from the database. Real RabbitMQ (127.0.0.1:5672),
the container's worker, relay and retry use case on a real SQLite unit of work; only the
clock is a test clock, so the relay's backoff is walked through without waiting.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pika
import pytest
from dependency_injector import providers

from ragline.adapters.inbound.task_consumer import Worker
from ragline.adapters.messaging.rabbitmq.connection import RabbitConnection
from ragline.adapters.messaging.rabbitmq.endpoints import RabbitEndpoints, task_queue
from ragline.adapters.messaging.rabbitmq.publisher import RabbitPublisher
from ragline.adapters.messaging.rabbitmq.source import RabbitTaskSource
from ragline.adapters.wire_format.json import JsonWireFormat
from ragline.application.access import Caller
from ragline.application.health import obtain
from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import IngestFiles
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.ports.messaging import MessageBusError
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.runs import RetryRun
from ragline.application.tasks import ParseTaskCommand, TaskStatus
from ragline.bootstrap.container import container_for
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.clock import FakeClock

RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


@pytest.fixture
def topics() -> Iterator[tuple[str, str]]:
    suffix = uuid.uuid4().hex[:10]
    tasks, results = f"retry-tasks-{suffix}", f"retry-results-{suffix}"
    yield tasks, results
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    channel = connection.channel()
    for queue in (task_queue(tasks), f"{task_queue(tasks)}.DLQ", f"{results}.DLQ"):
        channel.queue_delete(queue)
    for exchange in (results, f"{results}.DLQ", tasks, f"{tasks}.DLQ"):
        channel.exchange_delete(exchange)
    connection.close()


def _task(task_id: str) -> ParseTaskCommand:
    return ParseTaskCommand(
        task_id=task_id,
        original_file_id=12345,
        document_parse_task_id=67890,
        user_id=1001,
        dataset_id=2001,
        file_type="txt",
        source_bucket="uploads",
        source_object_key="raw/missing.txt",  # never uploaded: CLEANING fails, recoverable
        source_filename="missing.txt",
        md_bucket="markdown",
        md_object_key="parsed/missing.md",
    )


async def _until_terminal(uow_factory: UnitOfWorkFactory, task_id: str) -> PipelineStatus:
    for _ in range(600):
        async with uow_factory() as uow:
            run = await uow.runs.get(task_id)
        if run is not None and run.is_terminal:
            return run.pipeline_status
        await asyncio.sleep(0.05)
    raise AssertionError(f"{task_id} never ended")


async def test_a_retry_leaves_no_catch_all_queue_and_unroutable_results_still_go_dead(
    tmp_path: Path, topics: tuple[str, str]
) -> None:
    task_topic, result_topic = topics
    container = container_for(
        tmp_path,
        mq_vendor="rabbitmq",
        rabbitmq_url=RABBIT_URL,
        parse_task_topic=task_topic,
        parse_result_topic=result_topic,
    )
    clock = FakeClock()
    container.clock.override(providers.Object(clock))
    probe = RabbitPublisher(RabbitConnection(url=RABBIT_URL), result_topic)
    try:
        uow_factory: UnitOfWorkFactory = await obtain(container.uow_factory)
        bus: RabbitEndpoints = await obtain(container.bus)
        source = bus.task_source()
        assert isinstance(source, RabbitTaskSource)
        await source.declare()  # the workers' queue exists before anything is published
        worker: Worker = await obtain(container.worker)
        retry_run: RetryRun = await obtain(container.retry_run)
        wire = JsonWireFormat()
        first = _task(f"t-{uuid.uuid4().hex[:8]}")
        async with worker.running():
            await bus.task_publisher().publish(wire.encode_task(first), first.routing_key)
            assert await _until_terminal(uow_factory, first.task_id) is PipelineStatus.FAILED
            result = await retry_run(Caller.service(), first.task_id, timeout_seconds=60)
        assert result.task_id == f"{first.task_id}-r1"
        assert result.task_status is TaskStatus.FAILED  # the source is still missing
        assert result.failure_reason is not None

        # nothing is bound to the result exchange: a result for any task id is unroutable
        with pytest.raises(MessageBusError, match="UnroutableError"):
            await probe.publish(b"{}", f"anyone-{uuid.uuid4().hex[:6]}")

        # ... so the first run's result (owed to the producer) is retried, then DEAD
        relay: OutboxRelay = await obtain(container.relay)
        for _ in range(relay.policy.max_attempts + 1):
            clock.advance(relay.policy.max_delay)
            report = await relay.relay_once()
            assert report.sent == 0
        async with uow_factory() as uow:
            row = await uow.outbox.get(first.task_id)
        assert row is not None and row.status == "DEAD"
    finally:
        await probe.close()
        await container.shutdown_resources()  # type: ignore[misc]


async def test_ingest_on_rabbitmq_binds_nothing_to_the_result_exchange_and_owes_no_result(
    tmp_path: Path, topics: tuple[str, str]
) -> None:
    """`ragline ingest` learns how its files ended from their runs: its tasks are ragline's
    own (issued_by ragline), so no result is owed, and no reader queue is left behind."""
    task_topic, result_topic = topics
    container = container_for(
        tmp_path / "data",
        mq_vendor="rabbitmq",
        rabbitmq_url=RABBIT_URL,
        parse_task_topic=task_topic,
        parse_result_topic=result_topic,
    )
    probe = RabbitPublisher(RabbitConnection(url=RABBIT_URL), result_topic)
    note = tmp_path / "tea.txt"
    note.write_text("Green tea is brewed at about 80 degrees.\n\nBlack tea wants boiling water.\n")
    try:
        bus: RabbitEndpoints = await obtain(container.bus)
        source = bus.task_source()
        assert isinstance(source, RabbitTaskSource)
        await source.declare()
        await (await obtain(container.provision_embedding))("1")
        ingest: IngestFiles = await obtain(container.ingest_files)
        worker: Worker = await obtain(container.worker)
        file = SourceFile(str(note), "tea.txt", "txt", note.stat().st_size, "cd" * 32)
        async with worker.running():
            summary = await asyncio.wait_for(ingest([file], "1", "1", _Quiet()), 120)
        [outcome] = summary.outcomes
        assert outcome.status == "success", outcome.failure_reason
        assert outcome.task_id is not None
        uow_factory: UnitOfWorkFactory = await obtain(container.uow_factory)
        async with uow_factory() as uow:
            assert await uow.outbox.get(outcome.task_id) is None
        with pytest.raises(MessageBusError, match="UnroutableError"):
            await probe.publish(b"{}", outcome.task_id)
    finally:
        await probe.close()
        await container.shutdown_resources()  # type: ignore[misc]


class _Quiet:
    def file_submitted(self, *_: object) -> None:
        pass

    def stage_changed(self, *_: object) -> None:
        pass

    def file_finished(self, *_: object) -> None:
        pass
