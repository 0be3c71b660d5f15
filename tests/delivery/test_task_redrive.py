"""Issue 19 item 1: a documented way back for task dead letters. `RedriveTaskDeadLetters`
(`ragline tasks redrive`, `POST /api/v1/tasks/redrive`) reads the task DLQ of each bus
(`MessageBus.task_dead_letters()`), publishes every dead letter to the task topic again
without the dead-letter headers, acks it on the DLQ and counts it
(ragline_task_redrives_total); a second redrive finds nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pika
import pytest

from ragline.adapters.messaging.inprocess.endpoints import InProcessEndpoints
from ragline.adapters.messaging.kafka import KafkaConnection
from ragline.adapters.messaging.kafka.endpoints import KafkaEndpoints
from ragline.adapters.messaging.rabbitmq.endpoints import RabbitEndpoints, task_queue
from ragline.adapters.wire_format.json import JsonWireFormat
from ragline.application.ports.messaging import DEAD_LETTER_REASON_HEADER, MessageBus
from ragline.application.ports.metrics import NoMetrics
from ragline.application.redrive import RedriveTaskDeadLetters
from ragline.contracts.wire import dead_letter_topic
from ragline.testing.kits.messaging import task_body, task_id_of

RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


class CountedRedrives(NoMetrics):
    def __init__(self) -> None:
        self.redriven = 0

    def tasks_redriven(self, count: int) -> None:
        self.redriven += count


@pytest.fixture(params=["inprocess", "rabbitmq", "kafka"])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[MessageBus]:
    suffix = uuid.uuid4().hex[:10]
    tasks, results = f"redrive-tasks-{suffix}", f"redrive-results-{suffix}"
    endpoints: MessageBus
    if request.param == "inprocess":
        endpoints = InProcessEndpoints(tasks, results)
    elif request.param == "rabbitmq":
        endpoints = RabbitEndpoints(RABBIT_URL, task_topic=tasks, result_topic=results)
    else:
        bootstrap = request.getfixturevalue("kafka_bootstrap")
        endpoints = KafkaEndpoints(
            KafkaConnection(bootstrap),
            bootstrap_servers=bootstrap,
            task_topic=tasks,
            result_topic=results,
            group_id=f"redrive-workers-{suffix}",
            max_poll_interval_ms=300_000,
        )
    try:
        yield endpoints
    finally:
        await endpoints.close()
        if request.param == "rabbitmq":
            _remove_rabbit(tasks)


def _remove_rabbit(topic: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    channel = connection.channel()
    for queue in (task_queue(topic), dead_letter_topic(task_queue(topic))):
        channel.queue_delete(queue)
    for exchange in (topic, dead_letter_topic(topic)):
        channel.exchange_delete(exchange)
    connection.close()


async def test_task_dead_letters_go_back_to_the_task_topic_once(bus: MessageBus) -> None:
    publisher = bus.task_publisher()
    source = bus.task_source()
    letters = source.__aiter__()
    sent = ["answered", "unlucky-1", "unlucky-2"]
    first = None
    start = getattr(source, "start", None)  # the broker's queue exists before publishing
    if start is not None:
        await start()
    for task_id in sent:
        await publisher.publish(task_body(task_id), "pdf")
    for index in range(3):
        delivery = await asyncio.wait_for(anext(letters), 60)
        if index == 0:
            first = delivery
            await delivery.ack()
        else:
            await delivery.dead_letter("INTERNAL_UNKNOWN_ERROR:open unit of work failed")
    await source.close()
    assert first is not None and task_id_of(first) == "answered"

    metrics = CountedRedrives()
    redrive = RedriveTaskDeadLetters(bus, JsonWireFormat(), metrics, first_seconds=60)
    report = await redrive()
    assert sorted(report.redriven) == ["unlucky-1", "unlucky-2"]
    assert metrics.redriven == 2

    again = bus.task_source()
    received = again.__aiter__()
    back = []
    for _ in range(2):  # one unsettled at a time (prefetch 1)
        delivery = await asyncio.wait_for(anext(received), 60)
        assert DEAD_LETTER_REASON_HEADER not in delivery.headers
        assert delivery.routing_key == "pdf"
        await delivery.ack()
        back.append(task_id_of(delivery))
    assert sorted(back) == ["unlucky-1", "unlucky-2"]
    await again.close()

    quiet = RedriveTaskDeadLetters(bus, JsonWireFormat(), first_seconds=3, idle_seconds=1)
    assert (await quiet()).redriven == [], "a redriven dead letter was redriven again"
