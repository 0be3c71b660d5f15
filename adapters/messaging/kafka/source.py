"""KafkaTaskSource: a consumer-group member that commits only what was settled.

Auto-commit is off. A settled delivery (ack or dead letter) advances the committed offset of
its partition to the lowest offset still unsettled there (`offsets.CommitWindow`), so a
message is never committed past before it is settled, even when a worker runs several tasks
of one partition at once and they finish out of order. After a rebalance,
deliveries from a partition this member lost are settled locally only; the new owner gets
them again (at-least-once; the pipeline is idempotent on task_id).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.errors import (
    CommitFailedError,
    ConsumerStoppedError,
    IllegalStateError,
    KafkaError,
)

from ragline.adapters.messaging.kafka.connection import KafkaConnection
from ragline.adapters.messaging.kafka.offsets import PartitionOffsets
from ragline.adapters.messaging.kafka.publisher import KafkaPublisher
from ragline.application.ports.messaging import MessageBusError
from ragline.contracts.wire.topics import (
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
    dead_letter_topic,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_POLL_INTERVAL_MS = 900_000
"""One task must finish within this window (seed: KAFKA_MAX_POLL_INTERVAL_MS, 15 minutes)."""


class _Revocations(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, offsets: PartitionOffsets[TopicPartition]) -> None:
        self._offsets = offsets

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._offsets.revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        return None


@dataclass(eq=False, slots=True)
class KafkaDelivery:
    body: bytes
    routing_key: str | None
    headers: Mapping[str, str]
    topic: str
    partition: int
    offset: int
    key: bytes | None
    _source: KafkaTaskSource
    _epoch: int
    _settled: bool = field(default=False)
    _settling: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def ack(self) -> None:
        async with self._settling:
            if not self._settled:
                await self._source._settle(self)

    async def dead_letter(self, reason: str) -> None:
        async with self._settling:
            if not self._settled:
                await self._set_aside(reason)

    async def _set_aside(self, reason: str) -> None:
        headers = {
            **self.headers,
            DEAD_LETTER_REASON_HEADER: reason,
            DEAD_LETTER_ORIGIN_HEADER: self.topic,
            "x-dead-letter-partition": str(self.partition),
            "x-dead-letter-offset": str(self.offset),
        }
        await self._source._dead_letters().publish_raw(self.body, self.key, headers)
        await self._source._settle(self)


class KafkaTaskSource:
    """TaskSource over `topic` as a member of consumer group `group_id`.

    `group_id=None` makes a group-less reader (all partitions from `auto_offset_reset`,
    nothing committed): for inspecting dead letters or results, never for the worker.
    """

    def __init__(
        self,
        connection: KafkaConnection,
        topic: str,
        group_id: str | None,
        *,
        dead_letter_topic_name: str | None = None,
        max_poll_interval_ms: int = DEFAULT_MAX_POLL_INTERVAL_MS,
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 3_000,
        auto_offset_reset: str = "earliest",
        metadata_max_age_ms: int = 300_000,
        max_poll_records: int = 1,
    ) -> None:
        self.topic = topic
        self.group_id = group_id
        self.dead_letter_topic = dead_letter_topic_name or dead_letter_topic(topic)
        self._connection = connection
        self._settings: dict[str, Any] = {
            "group_id": group_id,
            "enable_auto_commit": False,
            "auto_offset_reset": auto_offset_reset,
            "max_poll_interval_ms": max_poll_interval_ms,
            "session_timeout_ms": session_timeout_ms,
            "heartbeat_interval_ms": heartbeat_interval_ms,
            "metadata_max_age_ms": metadata_max_age_ms,
            "max_poll_records": max_poll_records,
            **connection.client_kwargs(),
        }
        self._consumer: AIOKafkaConsumer | None = None  # aiokafka needs a running loop
        self._dead_letter_publisher: KafkaPublisher | None = None
        self._offsets: PartitionOffsets[TopicPartition] = PartitionOffsets()
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()
        self._commits = asyncio.Lock()

    async def start(self) -> None:
        async with self._lock:
            if self._closing.is_set():
                raise MessageBusError(f"source for {self.topic} is closed")
            if self._consumer is not None:
                return
            consumer = AIOKafkaConsumer(**self._settings)
            if self.group_id is None:
                consumer.subscribe([self.topic])
            else:
                consumer.subscribe([self.topic], listener=_Revocations(self._offsets))
            try:
                await consumer.start()
            except KafkaError as error:
                await consumer.stop()
                raise MessageBusError(f"kafka unavailable: {error}") from error
            self._consumer = consumer

    def __aiter__(self) -> KafkaTaskSource:
        return self

    async def __anext__(self) -> KafkaDelivery:
        if self._closing.is_set():
            raise StopAsyncIteration
        await self.start()
        assert self._consumer is not None  # narrows for mypy  # nosec B101
        record = await self._next_record(self._consumer)
        if record is None:
            raise StopAsyncIteration
        tp = TopicPartition(record.topic, record.partition)
        epoch = self._offsets.delivered(tp, record.offset)
        return KafkaDelivery(
            body=record.value or b"",
            routing_key=None if record.key is None else record.key.decode("utf-8", "replace"),
            headers=_text_headers(record.headers),
            topic=record.topic,
            partition=record.partition,
            offset=record.offset,
            key=record.key,
            _source=self,
            _epoch=epoch,
        )

    async def _next_record(self, consumer: AIOKafkaConsumer) -> ConsumerRecord[bytes, bytes] | None:
        """The next record, or None once `close()` was called (even while waiting)."""
        fetch = asyncio.ensure_future(consumer.getone())
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            done, _ = await asyncio.wait({fetch, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (fetch, closing):
                if not waiter.done():
                    waiter.cancel()
        if fetch not in done or self._closing.is_set():
            return None
        try:
            record: ConsumerRecord[bytes, bytes] = fetch.result()
        except ConsumerStoppedError:
            return None
        except KafkaError as error:
            raise MessageBusError(f"consuming {self.topic} failed: {error}") from error
        return record

    async def close(self) -> None:
        """Leave the group. Unsettled deliveries are not committed: the group gets them again."""
        self._closing.set()
        async with self._lock:
            consumer, self._consumer = self._consumer, None
            publisher, self._dead_letter_publisher = self._dead_letter_publisher, None
        if consumer is not None:
            await consumer.stop()
        if publisher is not None:
            await publisher.close()

    async def __aenter__(self) -> KafkaTaskSource:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _dead_letters(self) -> KafkaPublisher:
        if self._closing.is_set():
            raise MessageBusError("source closed: the delivery will be delivered again")
        if self._dead_letter_publisher is None:
            self._dead_letter_publisher = KafkaPublisher(self._connection, self.dead_letter_topic)
        return self._dead_letter_publisher

    async def _settle(self, delivery: KafkaDelivery) -> None:
        consumer = self._consumer
        if consumer is None or self._closing.is_set():
            raise MessageBusError("source closed: the delivery will be delivered again")
        delivery._settled = True
        tp = TopicPartition(delivery.topic, delivery.partition)
        if self._offsets.epoch.get(tp, 0) != delivery._epoch:
            log.warning(
                "partition %s was reassigned; offset %s goes to its new owner", tp, delivery.offset
            )
            return
        async with self._commits:  # one at a time, so positions reach the broker in order
            position = self._offsets.settled(tp, delivery.offset)
            if position is None or self.group_id is None:
                return
            try:
                await consumer.commit({tp: position})
            except (CommitFailedError, IllegalStateError) as error:
                log.warning("commit of %s@%s lost to a rebalance: %s", tp, position, error)
            except KafkaError as error:
                raise MessageBusError(f"commit of {tp}@{position} failed: {error}") from error


def _text_headers(headers: Any) -> Mapping[str, str]:
    text = {name: (value or b"").decode("utf-8", "replace") for name, value in headers or ()}
    return MappingProxyType(text)


__all__ = [
    "DEFAULT_MAX_POLL_INTERVAL_MS",
    "KafkaDelivery",
    "KafkaTaskSource",
    "PartitionOffsets",
]
