"""Hole 1 of issue 12: a result nobody is bound for must stay owed, not be marked SENT.

The relay is the one the container builds from settings (MQ_VENDOR=rabbitmq), on the real
broker at 127.0.0.1:5672 and a real SQLite unit of work; only the clock is a test clock, so
the backoff can be walked through without waiting.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pika
import pytest
from dependency_injector import providers

from ragline.application.health import obtain
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.bootstrap.container import container_for
from ragline.testing.kits.persistence import a_result
from tests.fakes.clock import FakeClock

RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


@pytest.fixture
def topics() -> Iterator[tuple[str, str]]:
    suffix = uuid.uuid4().hex[:10]
    tasks, results = f"delivery-tasks-{suffix}", f"delivery-results-{suffix}"
    yield tasks, results
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    channel = connection.channel()
    channel.queue_delete(f"{results}.DLQ")
    for exchange in (results, f"{results}.DLQ", tasks):
        channel.exchange_delete(exchange)
    connection.close()


def _dead_letter_headers(queue: str) -> dict[str, object]:
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    try:
        method, properties, _ = connection.channel().basic_get(queue, auto_ack=False)
        assert method is not None, f"{queue} is empty"
        return dict(properties.headers or {})
    finally:
        connection.close()  # unacked: the copy stays in the queue


def _dead_letter_count(queue: str) -> int:
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    try:
        declared = connection.channel().queue_declare(queue, passive=True)
        return int(declared.method.message_count)
    finally:
        connection.close()


async def test_an_unroutable_result_is_retried_then_dead_never_sent(
    tmp_path: Path, topics: tuple[str, str], caplog: pytest.LogCaptureFixture
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
    try:
        uow_factory: UnitOfWorkFactory = await obtain(container.uow_factory)
        relay: OutboxRelay = await obtain(container.relay)
        async with uow_factory() as uow:
            await uow.outbox.put(a_result("t-unroutable"), result_topic, clock.now())
            await uow.commit()

        first = await relay.relay_once()
        assert (first.sent, first.retried) == (0, 1)
        async with uow_factory() as uow:
            row = await uow.outbox.get("t-unroutable")
        assert row is not None and row.status == "PENDING" and row.attempts == 1
        assert row.last_error is not None and "Unroutable" in row.last_error

        caplog.set_level(logging.ERROR, logger="ragline")
        for _ in range(relay.policy.max_attempts - 1):
            clock.advance(relay.policy.max_delay)
            report = await relay.relay_once()
            assert report.sent == 0
        async with uow_factory() as uow:
            dead = await uow.outbox.get("t-unroutable")
        assert dead is not None and dead.status == "DEAD"
        assert dead.attempts == relay.policy.max_attempts
        assert dead.last_error is not None
        assert dead.last_error.startswith("RESULT_NOTIFY_FAILED:")
        [dead_line] = [r for r in caplog.records if "dead after" in r.getMessage()]
        assert "t-unroutable" in dead_line.getMessage()
        assert getattr(dead_line, "task_id", None) == "t-unroutable"  # a field, not only text
        # the dead-letter copy is kept in a durable queue, not dropped by the exchange
        assert _dead_letter_count(f"{result_topic}.DLQ") == 1
        # ... and says why and after how many attempts (issue 19 item 10)
        headers = _dead_letter_headers(f"{result_topic}.DLQ")
        reason = headers.get("x-dead-letter-reason")
        assert isinstance(reason, str) and reason.startswith("RESULT_NOTIFY_FAILED:")
        assert headers.get("x-dead-letter-attempts") == str(relay.policy.max_attempts)
        assert headers.get("x-dead-letter-origin") == result_topic
        clock.advance(timedelta(days=1))
        assert (await relay.relay_once()).sent == 0
    finally:
        await container.shutdown_resources()  # type: ignore[misc]
