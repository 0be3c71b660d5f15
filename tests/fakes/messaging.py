"""Fake bus pieces: deliveries that record their settlement, sources, a flaky publisher, and
`FakeBus`, which joins them into an in-memory broker.

- `FakeDelivery(body)` alone is a scripted delivery: settling only records `acked` /
  `dead_letter_reason` (the first settlement wins).
- `FakeTaskSource(deliveries)` yields a scripted list (subclass `_iterate` for other scripts).
- `FakePublisher` records what it publishes (`fail_next(n)` makes the next n raise);
  made by `FakeBus.publisher(topic)` it also appends to that topic.
- `FakeBus`: topics keep every record; a consumer group starts at the oldest record; each
  record goes to one member of each group; a delivery not settled when its source closes is
  delivered again to the group (before newer records); `dead_letter(reason)` appends to
  `<topic>.DLQ` with the reason and origin headers; settling through a closed source raises
  MessageBusError. It holds `MessagingContract` (tests/fakes/test_fakes_hold_the_kits.py).
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import AsyncIterator, Callable, Mapping
from types import MappingProxyType

import attrs

from ragline.application.ports.messaging import MessageBusError
from ragline.contracts.wire import (
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
    dead_letter_topic,
)
from tests.fakes.faults import Faults


class FakeDelivery:
    def __init__(
        self,
        body: bytes,
        routing_key: str | None = None,
        topic: str = "tasks",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._body = body
        self._routing_key = routing_key
        self._topic = topic
        self._headers: Mapping[str, str] = MappingProxyType(dict(headers or {}))
        self.acked = False
        self.dead_letter_reason: str | None = None
        self._source: FakeBusSource | None = None  # set when a FakeBus delivered it
        self._offset = -1

    @property
    def body(self) -> bytes:
        return self._body

    @property
    def routing_key(self) -> str | None:
        return self._routing_key

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def settled(self) -> bool:
        return self.acked or self.dead_letter_reason is not None

    async def ack(self) -> None:
        if self.settled:
            return
        self._check_open()
        self.acked = True
        self._release()

    async def dead_letter(self, reason: str) -> None:
        if self.settled:
            return
        self._check_open()
        self.dead_letter_reason = reason  # settled before the await: a second call is a no-op
        if self._source is not None:
            headers = {
                **self.headers,
                DEAD_LETTER_REASON_HEADER: reason,
                DEAD_LETTER_ORIGIN_HEADER: self.topic,
            }
            await self._source.bus.append(
                dead_letter_topic(self.topic), self.body, self.routing_key, headers
            )
        self._release()

    def _check_open(self) -> None:
        if self._source is not None and self._source.closed:
            raise MessageBusError("source closed: the delivery will be delivered again")

    def _release(self) -> None:
        if self._source is not None:
            self._source.settled(self._offset)


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


class FakePublisher:
    """Publishes into `published`; `fail_next(n)` makes the next n publishes raise."""

    def __init__(
        self, faults: Faults | None = None, bus: FakeBus | None = None, topic: str = "results"
    ) -> None:
        self.faults = faults or Faults()
        self.published: list[tuple[str, bytes]] = []
        self.headers: list[dict[str, str]] = []  # of each published message, in order
        self.attempts = 0
        self.bus = bus
        self.topic = topic
        self.on_publish: Callable[[], None] | None = None  # e.g. a slow broker moving a clock

    def fail_next(self, times: int | None) -> None:
        self.faults.arm("publisher.publish", MessageBusError("broker said no"), times)

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.attempts += 1
        self.faults.check("publisher.publish")
        self.published.append((routing_key, body))
        self.headers.append(dict(headers or {}))
        if self.on_publish is not None:
            self.on_publish()
        if self.bus is not None:
            await self.bus.append(self.topic, body, routing_key, dict(headers or {}))


@attrs.frozen
class _Record:
    offset: int
    body: bytes
    routing_key: str | None
    headers: Mapping[str, str]


@attrs.define
class _Group:
    cursor: int = 0
    returned: list[int] = attrs.field(factory=list)  # heap of offsets to deliver again


class _Topic:
    def __init__(self) -> None:
        self.records: list[_Record] = []
        self.groups: dict[str, _Group] = {}
        self.changed = asyncio.Condition()

    def claim(self, group: _Group) -> _Record | None:
        if group.returned:
            return self.records[heapq.heappop(group.returned)]
        if group.cursor < len(self.records):
            group.cursor += 1
            return self.records[group.cursor - 1]
        return None


class FakeBus:
    """An in-memory broker for FakeBusSource / FakePublisher (one event loop)."""

    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.topics: dict[str, _Topic] = {}

    def topic(self, name: str) -> _Topic:
        return self.topics.setdefault(name, _Topic())

    def records(self, topic: str) -> list[tuple[str | None, bytes]]:
        """(routing_key, body) of everything ever published to `topic`, for assertions."""
        return [(r.routing_key, r.body) for r in self.topic(topic).records]

    async def append(
        self, topic: str, body: bytes, routing_key: str | None, headers: Mapping[str, str]
    ) -> None:
        state = self.topic(topic)
        record = _Record(
            len(state.records), bytes(body), routing_key, MappingProxyType(dict(headers))
        )
        state.records.append(record)
        async with state.changed:
            state.changed.notify_all()

    def publisher(self, topic: str) -> FakePublisher:
        """A ResultPublisher / TaskPublisher onto `topic` (shares the bus's faults)."""
        return FakePublisher(self.faults, bus=self, topic=topic)

    def source(self, topic: str, group: str) -> FakeBusSource:
        """A member of consumer group `group` on `topic`."""
        return FakeBusSource(self, topic, group)


class FakeBusSource(FakeTaskSource):
    """A TaskSource fed by a FakeBus: waits for records until closed."""

    def __init__(self, bus: FakeBus, topic: str, group: str) -> None:
        super().__init__([])
        self.bus = bus
        self.topic = topic
        self._state = bus.topic(topic)
        self._group = self._state.groups.setdefault(group, _Group())
        self._mine: set[int] = set()

    async def _iterate(self) -> AsyncIterator[FakeDelivery]:
        while True:
            async with self._state.changed:
                record = None
                while not self.closed and record is None:
                    record = self._state.claim(self._group)
                    if record is None:
                        await self._state.changed.wait()
            if self.closed:
                if record is not None:
                    heapq.heappush(self._group.returned, record.offset)
                return
            assert record is not None
            self._mine.add(record.offset)
            delivery = FakeDelivery(record.body, record.routing_key, self.topic, record.headers)
            delivery._source, delivery._offset = self, record.offset
            self.deliveries.append(delivery)
            yield delivery

    def settled(self, offset: int) -> None:
        self._mine.discard(offset)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for offset in sorted(self._mine):  # unsettled: delivered again to the group
            heapq.heappush(self._group.returned, offset)
        self._mine.clear()
        async with self._state.changed:
            self._state.changed.notify_all()
