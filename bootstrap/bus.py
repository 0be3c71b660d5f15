"""The message bus chosen by MQ_VENDOR, as the few endpoints ragline needs.

Task topic: the worker consumes it (one consumer group), the CLI/HTTP debug path publishes
to it (routing key = file_type). Result topic: the outbox relay publishes to it (routing
key = task_id); `ragline ingest` reads it to learn how its files ended.
"""

from __future__ import annotations

import uuid
from typing import Any

from ragline.bootstrap.settings import MqVendor, Settings
from ragline.contracts.wire import dead_letter_topic


def task_queue(topic: str) -> str:
    """The workers' shared queue on the task exchange (RabbitMQ)."""
    return f"{topic}.workers"


class InProcessEndpoints:
    """Embedded mode: one in-memory bus shared by the worker and the CLI in one process."""

    def __init__(self, settings: Settings) -> None:
        from ragline.adapters.inprocess_bus import InProcessBus

        self._settings = settings
        self._bus = InProcessBus()

    def task_source(self) -> Any:
        from ragline.adapters.inprocess_bus import InProcessTaskSource

        return InProcessTaskSource(self._bus, self._settings.parse_task_topic, "workers")

    def task_publisher(self) -> Any:
        from ragline.adapters.inprocess_bus import InProcessPublisher

        return InProcessPublisher(self._bus, self._settings.parse_task_topic)

    def result_publisher(self) -> Any:
        from ragline.adapters.inprocess_bus import InProcessPublisher

        return InProcessPublisher(self._bus, self._settings.parse_result_topic)

    def result_dead_letters(self) -> Any:
        from ragline.adapters.inprocess_bus import InProcessPublisher

        return InProcessPublisher(self._bus, dead_letter_topic(self._settings.parse_result_topic))

    def result_reader(self) -> Any:
        from ragline.adapters.inprocess_bus import InProcessTaskSource

        return InProcessTaskSource(
            self._bus, self._settings.parse_result_topic, f"reader-{uuid.uuid4()}"
        )


class KafkaEndpoints:
    def __init__(self, settings: Settings) -> None:
        from ragline.adapters.kafka import KafkaConnection

        self._settings = settings
        password = settings.kafka_sasl_password
        self._connection = KafkaConnection(
            settings.kafka_bootstrap_servers,
            security_protocol=settings.kafka_security_protocol,
            sasl_mechanism=settings.kafka_sasl_mechanism,
            sasl_plain_username=settings.kafka_sasl_username,
            sasl_plain_password=password.get_secret_value() if password else None,
        )

    def task_source(self) -> Any:
        from ragline.adapters.kafka import KafkaTaskSource

        return KafkaTaskSource(
            self._connection,
            self._settings.parse_task_topic,
            self._settings.kafka_group_id,
            max_poll_interval_ms=self._settings.kafka_max_poll_interval_ms,
            session_timeout_ms=6_000,
            heartbeat_interval_ms=2_000,
        )

    def task_publisher(self) -> Any:
        from ragline.adapters.kafka import KafkaPublisher

        return KafkaPublisher(self._connection, self._settings.parse_task_topic)

    def result_publisher(self) -> Any:
        from ragline.adapters.kafka import KafkaPublisher

        return KafkaPublisher(self._connection, self._settings.parse_result_topic)

    def result_dead_letters(self) -> Any:
        from ragline.adapters.kafka import KafkaPublisher

        return KafkaPublisher(
            self._connection, dead_letter_topic(self._settings.parse_result_topic)
        )

    def result_reader(self) -> Any:
        from ragline.adapters.kafka import KafkaTaskSource

        return KafkaTaskSource(self._connection, self._settings.parse_result_topic, None)


class RabbitEndpoints:
    def __init__(self, settings: Settings) -> None:
        from ragline.adapters.rabbitmq import RabbitConnection

        self._settings = settings
        self._connection = RabbitConnection(url=settings.rabbitmq_url)

    def task_source(self) -> Any:
        from ragline.adapters.rabbitmq import RabbitTaskSource

        topic = self._settings.parse_task_topic
        return RabbitTaskSource(self._connection, topic, task_queue(topic), binding_keys=("#",))

    def task_publisher(self) -> Any:
        from ragline.adapters.rabbitmq import RabbitPublisher

        return RabbitPublisher(self._connection, self._settings.parse_task_topic)

    def result_publisher(self) -> Any:
        from ragline.adapters.rabbitmq import RabbitPublisher

        return RabbitPublisher(self._connection, self._settings.parse_result_topic, mandatory=False)

    def result_dead_letters(self) -> Any:
        from ragline.adapters.rabbitmq import RabbitPublisher

        return RabbitPublisher(
            self._connection, dead_letter_topic(self._settings.parse_result_topic), mandatory=False
        )  # the last resort: nothing may stop it

    def result_reader(self) -> Any:
        from ragline.adapters.rabbitmq import RabbitTaskSource

        return RabbitTaskSource(
            self._connection,
            self._settings.parse_result_topic,
            f"ragline.results.{uuid.uuid4()}",
            with_dead_letters=False,
            queue_arguments={"x-expires": 600_000},  # a reader's queue goes when it does
        )


def bus_for(settings: Settings) -> Any:
    if settings.mq_vendor is MqVendor.KAFKA:
        return KafkaEndpoints(settings)
    if settings.mq_vendor is MqVendor.RABBITMQ:
        return RabbitEndpoints(settings)
    return InProcessEndpoints(settings)
