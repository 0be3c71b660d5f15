"""The messaging kit against the Kafka adapters on a real (tansu) broker over loopback."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from ragline.adapters.kafka import KafkaConnection, KafkaPublisher, KafkaTaskSource
from ragline.contracts.kits.messaging import MessagingContract, MessagingHarness

# Group joins on tansu take 3-20 s: short sessions, generous receive timeouts.
GROUP_TIMINGS = {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 2_000}


class KafkaHarness(MessagingHarness):
    def __init__(self, bootstrap: str) -> None:
        self.connection = KafkaConnection(bootstrap_servers=bootstrap, client_id="ragline-kit")
        suffix = uuid.uuid4().hex[:10]
        self.task_topic = f"kit-tasks-{suffix}"
        self.result_topic = f"kit-results-{suffix}"
        self.group = f"kit-workers-{suffix}"

    async def task_source(self) -> KafkaTaskSource:
        source = KafkaTaskSource(self.connection, self.task_topic, self.group, **GROUP_TIMINGS)
        await source.start()
        return source

    async def task_publisher(self) -> KafkaPublisher:
        publisher = KafkaPublisher(self.connection, self.task_topic)
        await publisher.start()
        return publisher

    async def result_publisher(self) -> KafkaPublisher:
        publisher = KafkaPublisher(self.connection, self.result_topic)
        await publisher.start()
        return publisher

    async def result_reader(self) -> KafkaTaskSource:
        return await self._reader(self.result_topic)

    async def dead_letter_reader(self) -> KafkaTaskSource:
        return await self._reader(f"{self.task_topic}.DLQ")

    async def _reader(self, topic: str) -> KafkaTaskSource:
        # Group-less: no join delay; reads from the earliest offset. Short metadata age so a
        # topic created after the reader started is seen quickly.
        reader = KafkaTaskSource(self.connection, topic, None, metadata_max_age_ms=1_000)
        await reader.start()
        return reader


class TestKafkaBus(MessagingContract):
    receive_timeout = 60.0

    @pytest.fixture
    async def harness(self, kafka_bootstrap: str) -> AsyncIterator[MessagingHarness]:
        yield KafkaHarness(kafka_bootstrap)
