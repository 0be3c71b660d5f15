"""`ragline worker` survives losing its RabbitMQ consumer: the broker cancels it (here: the
task queue is deleted, as an operator or a failover would), the worker reopens its task
source after a backoff, re-declares the queue, and the next task gets its result.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from pathlib import Path

import pika
import pytest

from ragline.contracts.wire import encode_parse_task
from tests.e2e.test_worker_broker import (
    USER,
    Broker,
    _collect,
    _provision,
    _task,
    _upload,
    broker,
    worker,
)

__all__ = ["broker", "worker"]  # the fixtures, shared with test_worker_broker

AMQP = "amqp://guest:guest@127.0.0.1:5672/%2F"


def _consumers(queue: str) -> int:
    connection = pika.BlockingConnection(pika.URLParameters(AMQP))
    try:
        channel = connection.channel()
        return int(channel.queue_declare(queue, passive=True).method.consumer_count)
    except pika.exceptions.ChannelClosedByBroker:  # the queue does not exist (yet)
        return 0
    finally:
        if connection.is_open:
            connection.close()


def _wait_for_consumer(queue: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while _consumers(queue) < 1:
        assert time.monotonic() < deadline, f"no consumer on {queue} after {timeout}s"
        time.sleep(0.2)


def _delete_queue(queue: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(AMQP))
    try:
        connection.channel().queue_delete(queue)
    finally:
        connection.close()


async def _after_losing_the_consumer(broker: Broker, worker: subprocess.Popen[bytes]) -> None:
    data_dir = Path(broker.env["RAGLINE_DATA_DIR"])
    await _provision(data_dir)
    key = await _upload(data_dir, "tea-brewing-guide.md")
    reader = broker.endpoints.result_reader()
    await reader.declare()
    source = broker.endpoints.task_source()
    queue = source.topology.queue
    await source.declare()
    await source.close()
    await asyncio.to_thread(_wait_for_consumer, queue)
    await asyncio.to_thread(_delete_queue, queue)  # the broker cancels the worker's consumer
    await asyncio.to_thread(_wait_for_consumer, queue)  # reopened: declared and consuming
    publisher = broker.endpoints.task_publisher()
    task_id = f"after-cancel-{uuid.uuid4().hex[:6]}"
    try:
        task = _task(task_id, USER, "tea-brewing-guide.md", key, "md")
        await publisher.publish(encode_parse_task(task), "md")
        results = await _collect(reader, {task_id})
    finally:
        await reader.close()
        await publisher.close()
    assert results[task_id].task_status == "success", results[task_id]
    assert worker.poll() is None, "the worker died"


@pytest.mark.parametrize("broker", ["rabbitmq"], indirect=True)
def test_worker_reopens_its_task_source_after_the_broker_cancels_it(
    broker: Broker, worker: subprocess.Popen[bytes]
) -> None:
    asyncio.run(_after_losing_the_consumer(broker, worker))
    log = (Path(broker.env["RAGLINE_DATA_DIR"]).parent / "worker.log").read_text()
    assert "reopening the task source" in log
