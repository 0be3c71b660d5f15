"""Fake bus: deliveries that record their settlement, a source, a flaky result publisher."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from ragline.application.ports.messaging import MessageBusError
from tests.fakes.faults import Faults


class FakeDelivery:
    def __init__(self, body: bytes, routing_key: str | None = None, topic: str = "tasks") -> None:
        self._body = body
        self._routing_key = routing_key
        self._topic = topic
        self.acked = False
        self.dead_letter_reason: str | None = None

    @property
    def body(self) -> bytes:
        return self._body

    @property
    def routing_key(self) -> str | None:
        return self._routing_key

    @property
    def headers(self) -> Mapping[str, str]:
        return {}

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def settled(self) -> bool:
        return self.acked or self.dead_letter_reason is not None

    async def ack(self) -> None:
        if not self.settled:
            self.acked = True

    async def dead_letter(self, reason: str) -> None:
        if not self.settled:
            self.dead_letter_reason = reason


class FakeTaskSource:
    def __init__(self, deliveries: list[FakeDelivery]) -> None:
        self.deliveries = deliveries
        self.closed = False

    async def _iterate(self) -> AsyncIterator[FakeDelivery]:
        for delivery in self.deliveries:
            if self.closed:
                return
            yield delivery

    def __aiter__(self) -> AsyncIterator[FakeDelivery]:
        return self._iterate()

    async def close(self) -> None:
        self.closed = True


class FakeResultPublisher:
    """Publishes into `published`; `fail_next(n)` makes the next n publishes raise."""

    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.published: list[tuple[str, bytes]] = []
        self.attempts = 0

    def fail_next(self, times: int | None) -> None:
        self.faults.arm("publisher.publish", MessageBusError("broker said no"), times)

    async def publish(self, body: bytes, routing_key: str) -> None:
        self.attempts += 1
        self.faults.check("publisher.publish")
        self.published.append((routing_key, body))
