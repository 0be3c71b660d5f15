"""RabbitTaskSource: a consumer of one durable queue, acking only what was settled.

Deliveries arrive on the pika thread and are handed to the event loop; `ack` and
`dead_letter` go back to that thread. `prefetch_count` bounds unsettled deliveries (default
1: tasks are long). A dead letter is published to the dead-letter exchange with the reason
header and confirmed before the original is acked, so it is never lost in between.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pika
from pika.adapters.blocking_connection import BlockingChannel

from ragline.adapters.messaging.rabbitmq.connection import RabbitConnection
from ragline.adapters.messaging.rabbitmq.thread import PikaThread
from ragline.adapters.messaging.rabbitmq.topology import QueueTopology
from ragline.application.ports.messaging import MessageBusError
from ragline.contracts.wire.topics import DEAD_LETTER_ORIGIN_HEADER, DEAD_LETTER_REASON_HEADER

_END = object()


@dataclass(eq=False, slots=True)
class RabbitDelivery:
    body: bytes
    routing_key: str | None
    headers: Mapping[str, str]
    topic: str
    delivery_tag: int
    redelivered: bool
    _properties: pika.BasicProperties
    _source: RabbitTaskSource
    _settled: bool = field(default=False)
    _settling: asyncio.Lock = field(default_factory=asyncio.Lock)  # a 2nd ack kills the channel

    async def ack(self) -> None:
        async with self._settling:
            if self._settled:
                return
            tag = self.delivery_tag
            await self._source._on_channel(lambda channel: channel.basic_ack(tag))
            self._settled = True

    async def dead_letter(self, reason: str) -> None:
        async with self._settling:
            if not self._settled:
                await self._set_aside(reason)
                self._settled = True

    async def _set_aside(self, reason: str) -> None:
        topology = self._source.topology
        if not topology.with_dead_letters:
            raise MessageBusError(f"{topology.queue} has no dead-letter exchange")
        original = self._properties
        headers: dict[str, Any] = dict(original.headers or {})
        headers[DEAD_LETTER_REASON_HEADER] = reason
        headers[DEAD_LETTER_ORIGIN_HEADER] = self.topic
        headers["x-dead-letter-queue"] = topology.queue
        properties = pika.BasicProperties(
            content_type=original.content_type,
            content_encoding=original.content_encoding,
            delivery_mode=pika.DeliveryMode.Persistent,
            headers=headers,
            message_id=original.message_id,
            timestamp=original.timestamp,
        )
        tag, body, routing_key = self.delivery_tag, self.body, self.routing_key or ""

        def set_aside(channel: BlockingChannel) -> None:
            channel.basic_publish(topology.dlx, routing_key, body, properties, mandatory=True)
            channel.basic_ack(tag)

        await self._source._on_channel(set_aside)


class RabbitTaskSource:
    """TaskSource over `queue`, bound to topic exchange `exchange` by `binding_keys`."""

    def __init__(
        self,
        connection: RabbitConnection,
        exchange: str,
        queue: str,
        *,
        binding_keys: Sequence[str] = ("#",),
        prefetch_count: int = 1,
        with_dead_letters: bool = True,
        dead_letter_exchange: str | None = None,
        dead_letter_queue: str | None = None,
        queue_arguments: Mapping[str, Any] | None = None,
    ) -> None:
        self.topology = QueueTopology(
            exchange=exchange,
            queue=queue,
            binding_keys=tuple(binding_keys),
            with_dead_letters=with_dead_letters,
            dead_letter_exchange=dead_letter_exchange,
            dead_letter_queue=dead_letter_queue,
            queue_arguments=dict(queue_arguments or {}),
        )
        self._connection = connection
        self._prefetch_count = prefetch_count
        self._thread: PikaThread | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._closed = False
        self._lock = asyncio.Lock()

    async def declare(self) -> None:
        """Declare exchanges, queues and bindings without consuming (provisioning step)."""
        thread = PikaThread(
            self._connection.parameters(), self.topology.declare, name=f"{self._name}-declare"
        )
        await thread.start()
        await thread.stop()

    async def start(self) -> None:
        async with self._lock:
            if self._closed:
                raise MessageBusError(f"source for {self.topology.queue} is closed")
            if self._thread is not None:
                return
            self._event_loop = asyncio.get_running_loop()
            thread = PikaThread(
                self._connection.parameters(), self._setup, name=self._name, on_exit=self._ended
            )
            await thread.start()
            self._thread = thread

    def __aiter__(self) -> RabbitTaskSource:
        return self

    async def __anext__(self) -> RabbitDelivery:
        if self._closed:
            raise StopAsyncIteration
        await self.start()
        item = await self._inbox.get()
        if item is _END:
            self._inbox.put_nowait(_END)  # for any other waiter
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._inbox.put_nowait(_END)
            raise MessageBusError(f"consuming {self.topology.queue} failed: {item!r}") from item
        assert isinstance(item, RabbitDelivery)  # narrows for mypy  # nosec B101
        return item

    async def close(self) -> None:
        """Cancel and disconnect: the broker requeues every unacked delivery."""
        self._closed = True
        self._inbox.put_nowait(_END)
        async with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            await thread.stop()

    async def __aenter__(self) -> RabbitTaskSource:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    @property
    def _name(self) -> str:
        return f"rabbitmq-consumer-{self.topology.queue}"

    async def _on_channel(self, work: Any) -> None:
        thread = self._thread
        if thread is None or self._closed:
            raise MessageBusError("source closed: the delivery will be delivered again")
        await thread.call(work)

    # --- on the pika thread -------------------------------------------------------------

    def _setup(self, channel: BlockingChannel) -> None:
        self.topology.declare(channel)
        channel.confirm_delivery()
        channel.basic_qos(prefetch_count=self._prefetch_count)
        channel.add_on_cancel_callback(self._cancelled_by_broker)
        channel.basic_consume(self.topology.queue, self._received, auto_ack=False)

    def _cancelled_by_broker(self, _frame: object) -> None:
        """Queue deleted or node failed over: end iteration with an error, do not hang."""
        self._hand_over(MessageBusError(f"{self.topology.queue}: consumer cancelled by broker"))

    def _received(
        self,
        channel: BlockingChannel,
        method: pika.spec.Basic.Deliver,
        properties: pika.BasicProperties,
        body: bytes,
    ) -> None:
        delivery = RabbitDelivery(
            body=body,
            routing_key=method.routing_key,
            headers=_text_headers(properties.headers),
            topic=method.exchange,
            delivery_tag=method.delivery_tag,
            redelivered=bool(method.redelivered),
            _properties=properties,
            _source=self,
        )
        self._hand_over(delivery)

    def _ended(self, error: BaseException | None) -> None:
        self._hand_over(_END if error is None else error)

    def _hand_over(self, item: object) -> None:
        loop = self._event_loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._inbox.put_nowait, item)


def _text_headers(headers: Mapping[str, Any] | None) -> Mapping[str, str]:
    text = {}
    for name, value in (headers or {}).items():
        text[name] = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return MappingProxyType(text)
