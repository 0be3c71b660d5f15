"""The bookkeeping every MessageBus adapter needs for its publishers.

A publisher per use-case call would pile up broker connections (and a Kafka producer left open
is only noticed by the garbage collector: "Unclosed AIOKafkaProducer"), so each role gets one
publisher for the bus's lifetime and `close()` closes them all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from ragline.application.error_text import describe
from ragline.application.ports.messaging import MessageBusError

log = logging.getLogger(__name__)


class ClosingPublisher(Protocol):
    async def close(self) -> None: ...


P = TypeVar("P", bound=ClosingPublisher)


class SharedPublishers(Generic[P]):
    def __init__(self) -> None:
        self._publishers: dict[str, P] = {}
        self._closed = False

    def get(self, role: str, build: Callable[[], P]) -> P:
        """The role's publisher, built on first use; MessageBusError once the bus is closed."""
        if self._closed:
            raise MessageBusError("the message bus is closed")
        publisher = self._publishers.get(role)
        if publisher is None:
            publisher = self._publishers[role] = build()
        return publisher

    async def close(self) -> None:
        """Close every publisher handed out; one failing does not stop the others."""
        self._closed = True
        publishers, self._publishers = self._publishers, {}
        for publisher in publishers.values():
            try:
                await publisher.close()
            except Exception as error:
                log.warning(
                    "closing a %s publisher failed: %s", type(publisher).__name__, describe(error)
                )
