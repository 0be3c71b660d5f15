"""KafkaPublisher: Publisher over one topic, acks=all."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from ragline.adapters.messaging.kafka.connection import KafkaConnection
from ragline.application.ports.messaging import MessageBusError


class KafkaPublisher:
    """Publishes to `topic` with key = routing key; `publish` returns after the broker acked.

    The key decides the partition, so messages with one routing key stay in order.
    Starts lazily on first publish; `close()` flushes and releases the connection.
    """

    def __init__(
        self,
        connection: KafkaConnection,
        topic: str,
        *,
        acks: str | int = "all",
        enable_idempotence: bool = False,
        linger_ms: int = 0,
        max_request_size: int = 1_048_576,
    ) -> None:
        self.topic = topic
        self._settings: dict[str, Any] = {
            "acks": acks,
            "enable_idempotence": enable_idempotence,
            "linger_ms": linger_ms,
            "max_request_size": max_request_size,
            **connection.client_kwargs(),
        }
        self._producer: AIOKafkaProducer | None = None  # aiokafka needs a running loop
        self._closed = False
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        async with self._lock:
            if self._closed:
                raise MessageBusError(f"publisher for {self.topic} is closed")
            if self._producer is None:
                producer = AIOKafkaProducer(**self._settings)
                try:
                    await producer.start()
                except KafkaError as error:
                    await producer.stop()
                    raise MessageBusError(f"kafka unavailable: {error}") from error
                self._producer = producer

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        await self.publish_raw(body, routing_key.encode("utf-8"), headers)

    async def publish_raw(
        self, body: bytes, key: bytes | None, headers: Mapping[str, str] | None = None
    ) -> None:
        """Publish with a key kept byte for byte (dead letters keep the original key)."""
        await self.start()
        assert self._producer is not None  # narrows for mypy  # nosec B101
        encoded = [(name, value.encode("utf-8")) for name, value in (headers or {}).items()]
        try:
            await self._producer.send_and_wait(self.topic, value=body, key=key, headers=encoded)
        except KafkaError as error:
            raise MessageBusError(f"publish to {self.topic} failed: {error}") from error

    async def close(self) -> None:
        async with self._lock:
            self._closed = True
            if self._producer is not None:
                producer, self._producer = self._producer, None
                await producer.stop()

    async def __aenter__(self) -> KafkaPublisher:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()
