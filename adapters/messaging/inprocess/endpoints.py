"""The MessageBus of embedded mode: one in-memory bus shared by the worker and the CLI."""

from __future__ import annotations

import uuid

from ragline.adapters.messaging.inprocess.bus import (
    InProcessBus,
    InProcessPublisher,
    InProcessTaskSource,
)
from ragline.adapters.messaging.publisher_pool import SharedPublishers
from ragline.application.ports.messaging import Publisher, TaskSource
from ragline.contracts.wire import dead_letter_topic


class InProcessEndpoints:
    def __init__(self, task_topic: str, result_topic: str) -> None:
        self._task_topic = task_topic
        self._result_topic = result_topic
        self._bus = InProcessBus()
        self._publishers = SharedPublishers[InProcessPublisher]()

    @property
    def in_process(self) -> bool:
        return True

    def task_source(self, *, in_flight: int = 1) -> TaskSource:
        """Any number of deliveries may be unsettled at once: `in_flight` needs no setting."""
        return InProcessTaskSource(self._bus, self._task_topic, "workers")

    def task_publisher(self) -> Publisher:
        return self._publishers.get(
            "task_publisher", lambda: InProcessPublisher(self._bus, self._task_topic)
        )

    def result_publisher(self) -> Publisher:
        return self._publishers.get(
            "result_publisher", lambda: InProcessPublisher(self._bus, self._result_topic)
        )

    def result_dead_letters(self) -> Publisher:
        return self._publishers.get(
            "result_dead_letters",
            lambda: InProcessPublisher(self._bus, dead_letter_topic(self._result_topic)),
        )

    def result_reader(self) -> TaskSource:
        return InProcessTaskSource(self._bus, self._result_topic, f"reader-{uuid.uuid4()}")

    def task_dead_letters(self) -> TaskSource:
        return InProcessTaskSource(self._bus, dead_letter_topic(self._task_topic), "redrive")

    async def close(self) -> None:
        await self._publishers.close()

    async def probe(self) -> str:
        return "in-process (this process only)"
