"""The MessageBus of embedded mode: one in-memory bus shared by the worker and the CLI."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from ragline.adapters.inprocess_bus.bus import InProcessBus, InProcessPublisher, InProcessTaskSource
from ragline.application.ports.messaging import MessageBusError, Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic

log = logging.getLogger(__name__)


class InProcessEndpoints:
    def __init__(self, task_topic: str, result_topic: str) -> None:
        self._task_topic = task_topic
        self._result_topic = result_topic
        self._bus = InProcessBus()
        self._publishers: dict[str, InProcessPublisher] = {}  # one per role, shared
        self._closed = False

    @property
    def in_process(self) -> bool:
        return True

    def task_source(self) -> TaskSource:
        return InProcessTaskSource(self._bus, self._task_topic, "workers")

    def task_publisher(self) -> Publisher:
        return self._shared(
            "task_publisher", lambda: InProcessPublisher(self._bus, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        return self._shared(
            "result_publisher", lambda: InProcessPublisher(self._bus, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        return self._shared(
            "result_dead_letters",
            lambda: InProcessPublisher(self._bus, dead_letter_topic(self._result_topic)),
        )

    def result_reader(self) -> TaskSource:
        return InProcessTaskSource(self._bus, self._result_topic, f"reader-{uuid.uuid4()}")

    def _shared(self, role: str, build: Callable[[], InProcessPublisher]) -> InProcessPublisher:
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
        return "in-process (this process only)"
