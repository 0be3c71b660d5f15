"""The messaging kit against the Kafka adapters on a real (tansu) broker over loopback."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition

from ragline.adapters.messaging.kafka import KafkaConnection, KafkaPublisher, KafkaTaskSource
from ragline.adapters.messaging.kafka.source import PartitionOffsets
from ragline.testing.kits.messaging import MessagingContract, MessagingHarness

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


def test_commits_never_pass_an_unsettled_offset() -> None:
    offsets = PartitionOffsets()
    tp = TopicPartition("t", 0)
    for offset in (5, 6, 7):
        offsets.delivered(tp, offset)
    assert offsets.settled(tp, 6) == 5  # 5 is still open: nothing past it is committed
    assert offsets.settled(tp, 5) == 7
    assert offsets.settled(tp, 7) == 8
    offsets.delivered(tp, 8)
    offsets.revoked({tp})
    assert offsets.epoch[tp] == 1  # deliveries of the old assignment are now stale
    assert offsets.delivered(tp, 8) == 1
    assert offsets.settled(tp, 8) == 9


async def test_connection_settings_pass_through_to_aiokafka() -> None:
    connection = KafkaConnection(
        bootstrap_servers="broker-1:9092,broker-2:9092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="ragline",
        sasl_plain_password="secret",
        extra={"connections_max_idle_ms": 60_000},
    )
    kwargs = connection.client_kwargs()
    assert kwargs["sasl_plain_password"] == "secret"
    assert kwargs["connections_max_idle_ms"] == 60_000
    assert "secret" not in repr(connection)
    producer = AIOKafkaProducer(acks="all", **kwargs)  # aiokafka validates the combination
    assert producer.client._sasl_mechanism == "PLAIN"
    assert producer.client._security_protocol == "SASL_PLAINTEXT"
    ssl_kwargs = KafkaConnection("b:9093", security_protocol="SASL_SSL").client_kwargs()
    assert ssl_kwargs["ssl_context"] is not None
