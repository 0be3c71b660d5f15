"""The MessageBus on RabbitMQ: topic exchanges, the workers' shared queue, reader queues."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from ragline.adapters.messaging.publisher_pool import SharedPublishers
from ragline.adapters.messaging.rabbitmq.connection import RabbitConnection
from ragline.adapters.messaging.rabbitmq.publisher import RabbitPublisher
from ragline.adapters.messaging.rabbitmq.source import RabbitTaskSource
from ragline.adapters.messaging.tcp_probe import accepts_connections
from ragline.application.ports.messaging import Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic


def task_queue(topic: str) -> str:
    """The workers' shared queue on the task exchange."""
    return f"{topic}.workers"


class RabbitEndpoints:
    def __init__(self, url: str, *, task_topic: str, result_topic: str) -> None:
        self._url = url
        self._connection = RabbitConnection(url=url)
        self._task_topic = task_topic
        self._result_topic = result_topic
        self._publishers = SharedPublishers[RabbitPublisher]()

    @property
    def in_process(self) -> bool:
        return False

    def task_source(self, *, in_flight: int = 1) -> TaskSource:
        topic = self._task_topic
        return RabbitTaskSource(
            self._connection,
            topic,
            task_queue(topic),
            binding_keys=("#",),
            prefetch_count=in_flight,
        )

    def task_publisher(self) -> Publisher:
        return self._publishers.get(
            "task_publisher", lambda: RabbitPublisher(self._connection, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        """Mandatory: a result no queue is bound for fails the publish, so the outbox keeps
        it owed (retried, then DEAD) instead of marking it SENT while the broker drops it."""
        return self._publishers.get(
            "result_publisher", lambda: RabbitPublisher(self._connection, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        """The last resort keeps its copies in a durable `<result topic>.DLQ` queue (as a
        Kafka DLQ topic retains them), and is mandatory too: a drop is logged, not hidden."""
        exchange = dead_letter_topic(self._result_topic)
        return self._publishers.get(
            "result_dead_letters",
            lambda: RabbitPublisher(self._connection, exchange, holding_queue=exchange),
        )

    def result_reader(self) -> TaskSource:
        return RabbitTaskSource(
            self._connection,
            self._result_topic,
            f"ragline.results.{uuid.uuid4()}",
            with_dead_letters=False,
            queue_arguments={"x-expires": 600_000},  # a reader's queue goes when it does
        )

    def task_dead_letters(self) -> TaskSource:
        """The workers' `<queue>.DLQ` (bound to `<task topic>.DLQ` with #, as declared by
        the workers' source): an acked message leaves it."""
        topic = self._task_topic
        return RabbitTaskSource(
            self._connection,
            dead_letter_topic(topic),
            dead_letter_topic(task_queue(topic)),
            with_dead_letters=False,
        )

    async def close(self) -> None:
        await self._publishers.close()

    async def probe(self) -> str:
        url = urlsplit(self._url)
        return accepts_connections(url.hostname or "127.0.0.1", url.port or 5672)
