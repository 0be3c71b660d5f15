"""The messaging kit against the RabbitMQ adapters on the real broker at 127.0.0.1:5672."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pika
import pytest

from ragline.adapters.messaging.rabbitmq import RabbitConnection, RabbitPublisher, RabbitTaskSource
from ragline.application.ports.messaging import MessageBusError
from ragline.testing.kits.messaging import (
    MessagingContract,
    MessagingHarness,
    result_body,
    task_body,
)

CONNECTION = RabbitConnection(host="127.0.0.1", port=5672, client_name="ragline-kit")


class RabbitHarness(MessagingHarness):
    def __init__(self) -> None:
        suffix = uuid.uuid4().hex[:10]
        self.task_topic = f"kit-tasks-{suffix}"
        self.result_topic = f"kit-results-{suffix}"
        self.queue = f"kit-workers-{suffix}"
        self.result_queue = f"kit-result-reader-{suffix}"

    def worker(self) -> RabbitTaskSource:
        return RabbitTaskSource(CONNECTION, self.task_topic, self.queue)

    async def provision(self) -> None:
        """Like a deployment: the durable queue exists before the first task is published."""
        await self.worker().declare()

    async def task_source(self) -> RabbitTaskSource:
        source = self.worker()
        await source.start()
        return source

    async def task_publisher(self) -> RabbitPublisher:
        return RabbitPublisher(CONNECTION, self.task_topic)

    async def result_publisher(self) -> RabbitPublisher:
        return RabbitPublisher(CONNECTION, self.result_topic)

    async def result_reader(self) -> RabbitTaskSource:
        reader = RabbitTaskSource(
            CONNECTION, self.result_topic, self.result_queue, with_dead_letters=False
        )
        await reader.start()
        return reader

    async def dead_letter_reader(self) -> RabbitTaskSource:
        reader = RabbitTaskSource(
            CONNECTION, f"{self.task_topic}.DLQ", f"{self.queue}.DLQ", with_dead_letters=False
        )
        await reader.start()
        return reader

    def remove(self) -> None:
        connection = pika.BlockingConnection(CONNECTION.parameters())
        channel = connection.channel()
        for queue in (self.queue, f"{self.queue}.DLQ", self.result_queue):
            channel.queue_delete(queue)
        for exchange in (self.task_topic, f"{self.task_topic}.DLQ", self.result_topic):
            channel.exchange_delete(exchange)
        connection.close()


@pytest.fixture
async def rabbit() -> AsyncIterator[RabbitHarness]:
    harness = RabbitHarness()
    await harness.provision()
    try:
        yield harness
    finally:
        harness.remove()


class TestRabbitBus(MessagingContract):
    receive_timeout = 20.0

    @pytest.fixture
    async def harness(self, rabbit: RabbitHarness) -> AsyncIterator[MessagingHarness]:
        yield rabbit


async def test_publishing_where_no_queue_is_bound_is_an_error(rabbit: RabbitHarness) -> None:
    publisher = RabbitPublisher(CONNECTION, rabbit.result_topic)
    try:
        with pytest.raises(MessageBusError, match="Unroutable"):
            await publisher.publish(result_body("lost"), "lost")
        reader = await rabbit.result_reader()
        try:
            await publisher.publish(result_body("kept"), "kept")
            delivery = await anext(aiter(reader))
            assert delivery.routing_key == "kept"
            await delivery.ack()
        finally:
            await reader.close()
    finally:
        await publisher.close()


async def test_bindings_filter_tasks_by_file_type(rabbit: RabbitHarness) -> None:
    pdf_only = RabbitTaskSource(
        CONNECTION, rabbit.task_topic, f"{rabbit.queue}-pdf", binding_keys=["pdf"]
    )
    publisher = RabbitPublisher(CONNECTION, rabbit.task_topic)
    try:
        await pdf_only.start()
        await publisher.publish(task_body("d", "docx"), "docx")
        await publisher.publish(task_body("p", "pdf"), "pdf")
        delivery = await anext(aiter(pdf_only))
        assert delivery.routing_key == "pdf" and b'"p"' in delivery.body
        await delivery.ack()
    finally:
        await publisher.close()
        await pdf_only.close()
        connection = pika.BlockingConnection(CONNECTION.parameters())
        channel = connection.channel()
        channel.queue_delete(f"{rabbit.queue}-pdf")
        channel.queue_delete(f"{rabbit.queue}-pdf.DLQ")
        connection.close()


async def test_a_consumer_cancelled_by_the_broker_ends_with_an_error(rabbit: RabbitHarness) -> None:
    source = await rabbit.task_source()
    try:
        waiting = asyncio.ensure_future(anext(aiter(source)))
        connection = pika.BlockingConnection(CONNECTION.parameters())
        connection.channel().queue_delete(rabbit.queue)
        connection.close()
        with pytest.raises(MessageBusError, match="cancelled by broker"):
            await asyncio.wait_for(waiting, 20)
    finally:
        await source.close()


async def test_messages_the_broker_rejects_land_in_the_dead_letter_queue(
    rabbit: RabbitHarness,
) -> None:
    publisher = RabbitPublisher(CONNECTION, rabbit.task_topic)
    try:
        await publisher.publish(task_body("rejected"), "pdf")
    finally:
        await publisher.close()
    connection = pika.BlockingConnection(CONNECTION.parameters())
    channel = connection.channel()
    method, _, _ = channel.basic_get(rabbit.queue)
    assert method is not None
    channel.basic_reject(method.delivery_tag, requeue=False)
    connection.close()
    reader = await rabbit.dead_letter_reader()
    try:
        letter = await asyncio.wait_for(anext(aiter(reader)), 20)
        assert letter.routing_key == "pdf" and b'"rejected"' in letter.body
        assert "x-death" in letter.headers
        await letter.ack()
    finally:
        await reader.close()
