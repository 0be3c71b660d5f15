"""The MessageBus on RabbitMQ: topic exchanges, the workers' shared queue, reader queues."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from urllib.parse import urlsplit

from ragline.adapters.rabbitmq.connection import RabbitConnection
from ragline.adapters.rabbitmq.publisher import RabbitPublisher
from ragline.adapters.rabbitmq.source import RabbitTaskSource
from ragline.adapters.tcp_probe import accepts_connections
from ragline.application.ports.messaging import MessageBusError, Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic

log = logging.getLogger(__name__)


def task_queue(topic: str) -> str:
    """The workers' shared queue on the task exchange."""
    return f"{topic}.workers"


class RabbitEndpoints:
    def __init__(self, url: str, *, task_topic: str, result_topic: str) -> None:
        self._url = url
        self._connection = RabbitConnection(url=url)
        self._task_topic = task_topic
        self._result_topic = result_topic
        self._publishers: dict[str, RabbitPublisher] = {}  # one per role, shared
        self._closed = False

    @property
    def in_process(self) -> bool:
        return False

    def task_source(self) -> TaskSource:
        topic = self._task_topic
        return RabbitTaskSource(self._connection, topic, task_queue(topic), binding_keys=("#",))

    def task_publisher(self) -> Publisher:
        return self._shared(
            "task_publisher", lambda: RabbitPublisher(self._connection, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        """Mandatory: a result no queue is bound for fails the publish, so the outbox keeps
        it owed (retried, then DEAD) instead of marking it SENT while the broker drops it."""
        return self._shared(
            "result_publisher", lambda: RabbitPublisher(self._connection, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        """The last resort keeps its copies in a durable `<result topic>.DLQ` queue (as a
        Kafka DLQ topic retains them), and is mandatory too: a drop is logged, not hidden."""
        exchange = dead_letter_topic(self._result_topic)
        return self._shared(
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

    def _shared(self, role: str, build: Callable[[], RabbitPublisher]) -> RabbitPublisher:
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
        url = urlsplit(self._url)
        return accepts_connections(url.hostname or "127.0.0.1", url.port or 5672)
