"""RabbitPublisher: Publisher over one topic exchange, with confirms."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pika
from pika.adapters.blocking_connection import BlockingChannel

from ragline.adapters.messaging.rabbitmq.connection import RabbitConnection
from ragline.adapters.messaging.rabbitmq.thread import PikaThread
from ragline.adapters.messaging.rabbitmq.topology import declare_exchange
from ragline.application.ports.messaging import MessageBusError
from ragline.contracts.wire.topics import CONTENT_ENCODING, CONTENT_TYPE


class RabbitPublisher:
    """Publishes persistent messages to the durable topic exchange `exchange`.

    `publish` returns after the broker confirmed the message. With `mandatory` (default) a
    message no queue is bound for is an error (MessageBusError), not a silent drop.
    `holding_queue` names a durable queue bound to the exchange with "#" (declared on
    connect), for an exchange whose messages must be kept even when nobody listens yet
    (the result dead letters). Starts lazily; after a lost connection the next publish
    reconnects.
    """

    def __init__(
        self,
        connection: RabbitConnection,
        exchange: str,
        *,
        mandatory: bool = True,
        holding_queue: str | None = None,
    ) -> None:
        self.exchange = exchange
        self._connection = connection
        self._mandatory = mandatory
        self._holding_queue = holding_queue
        self._thread: PikaThread | None = None
        self._closed = False
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        async with self._lock:
            if self._closed:
                raise MessageBusError(f"publisher for {self.exchange} is closed")
            if self._thread is not None and self._thread.alive:
                return
            thread = PikaThread(self._connection.parameters(), self._setup, name=self._name)
            await thread.start()
            self._thread = thread

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        await self.start()
        assert self._thread is not None  # narrows for mypy  # nosec B101
        properties = pika.BasicProperties(
            content_type=CONTENT_TYPE,
            content_encoding=CONTENT_ENCODING,
            delivery_mode=pika.DeliveryMode.Persistent,
            headers=dict(headers) if headers else None,
        )

        def send(channel: BlockingChannel) -> None:
            channel.basic_publish(
                self.exchange, routing_key, body, properties, mandatory=self._mandatory
            )

        await self._thread.call(send)

    async def close(self) -> None:
        async with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            await thread.stop()

    async def __aenter__(self) -> RabbitPublisher:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    @property
    def _name(self) -> str:
        return f"rabbitmq-publisher-{self.exchange}"

    def _setup(self, channel: BlockingChannel) -> None:
        channel.confirm_delivery()
        declare_exchange(channel, self.exchange)
        if self._holding_queue is not None:
            channel.queue_declare(self._holding_queue, durable=True)
            channel.queue_bind(self._holding_queue, self.exchange, routing_key="#")
