"""The MessageBus on Kafka: one connection, the task topic's group, the result topic."""

from __future__ import annotations

from ragline.adapters.messaging.kafka.connection import KafkaConnection
from ragline.adapters.messaging.kafka.publisher import KafkaPublisher
from ragline.adapters.messaging.kafka.source import KafkaTaskSource
from ragline.adapters.messaging.publisher_pool import SharedPublishers
from ragline.adapters.messaging.tcp_probe import accepts_connections
from ragline.application.ports.messaging import Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic


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
        self._publishers = SharedPublishers[KafkaPublisher]()

    @property
    def in_process(self) -> bool:
        return False

    def task_source(self, *, in_flight: int = 1) -> TaskSource:
        """Kafka has no prefetch to set: the source commits below its unsettled offsets."""
        return KafkaTaskSource(
            self._connection,
            self._task_topic,
            self._group_id,
            max_poll_interval_ms=self._max_poll_interval_ms,
            session_timeout_ms=6_000,
            heartbeat_interval_ms=2_000,
        )

    def task_publisher(self) -> Publisher:
        return self._publishers.get(
            "task_publisher", lambda: KafkaPublisher(self._connection, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        return self._publishers.get(
            "result_publisher", lambda: KafkaPublisher(self._connection, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        return self._publishers.get(
            "result_dead_letters",
            lambda: KafkaPublisher(self._connection, dead_letter_topic(self._result_topic)),
        )

    def result_reader(self) -> TaskSource:
        return KafkaTaskSource(self._connection, self._result_topic, None)

    def task_dead_letters(self) -> TaskSource:
        """Its own group commits what was redriven, so a second redrive skips it."""
        return KafkaTaskSource(
            self._connection,
            dead_letter_topic(self._task_topic),
            f"{self._group_id}-redrive",
            session_timeout_ms=6_000,
            heartbeat_interval_ms=2_000,
        )

    async def close(self) -> None:
        await self._publishers.close()

    async def probe(self) -> str:
        host, _, port = self._bootstrap_servers.split(",")[0].rpartition(":")
        return accepts_connections(host, int(port))
