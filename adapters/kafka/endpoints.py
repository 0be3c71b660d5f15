"""The MessageBus on Kafka: one connection, the task topic's group, the result topic."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ragline.adapters.kafka.connection import KafkaConnection
from ragline.adapters.kafka.publisher import KafkaPublisher
from ragline.adapters.kafka.source import KafkaTaskSource
from ragline.adapters.tcp_probe import accepts_connections
from ragline.application.ports.messaging import MessageBusError, Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic

log = logging.getLogger(__name__)


class KafkaEndpoints:
    def __init__(
        self,
        connection: KafkaConnection,
        *,
        bootstrap_servers: str,
        task_topic: str,
        result_topic: str,
        group_id: str,
        max_poll_interval_ms: int,
    ) -> None:
        self._connection = connection
        self._bootstrap_servers = bootstrap_servers
        self._task_topic = task_topic
        self._result_topic = result_topic
        self._group_id = group_id
        self._max_poll_interval_ms = max_poll_interval_ms
        self._publishers: dict[str, KafkaPublisher] = {}  # one per role, shared
        self._closed = False

    @property
    def in_process(self) -> bool:
        return False

    def task_source(self) -> TaskSource:
        return KafkaTaskSource(
            self._connection,
            self._task_topic,
            self._group_id,
            max_poll_interval_ms=self._max_poll_interval_ms,
            session_timeout_ms=6_000,
            heartbeat_interval_ms=2_000,
        )

    def task_publisher(self) -> Publisher:
        return self._shared(
            "task_publisher", lambda: KafkaPublisher(self._connection, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        return self._shared(
            "result_publisher", lambda: KafkaPublisher(self._connection, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        return self._shared(
            "result_dead_letters",
            lambda: KafkaPublisher(self._connection, dead_letter_topic(self._result_topic)),
        )

    def result_reader(self) -> TaskSource:
        return KafkaTaskSource(self._connection, self._result_topic, None)

    def _shared(self, role: str, build: Callable[[], KafkaPublisher]) -> KafkaPublisher:
        """One publisher per role for the bus's lifetime (a Kafka producer per use-case
        call would pile up connections), closed by `close()`."""
        if self._closed:
            raise MessageBusError("the message bus is closed")
        publisher = self._publishers.get(role)
        if publisher is None:
            publisher = self._publishers[role] = build()
        return publisher

    async def close(self) -> None:
        """Close every publisher handed out (a Kafka producer left open is only noticed by
        the garbage collector: "Unclosed AIOKafkaProducer"); one failing does not stop the
        others."""
        self._closed = True
        publishers, self._publishers = self._publishers, {}
        for publisher in publishers.values():
            try:
                await publisher.close()
            except Exception as error:
                log.warning("closing a %s publisher failed: %r", type(publisher).__name__, error)

    async def probe(self) -> str:
        host, _, port = self._bootstrap_servers.split(",")[0].rpartition(":")
        return accepts_connections(host, int(port))
