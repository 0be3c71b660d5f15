"""An asyncio message bus living in one process (embedded mode, one event loop).

Semantics match the broker adapters so the same contract kit passes:
- topics keep their messages until every consumer group has settled them (a group created
  later starts at the oldest retained message), bounded by `retention` per topic;
- each message goes to one member of each group; per-routing-key order holds with one member;
- a delivery not settled when its source closes is delivered again to the group;
- `dead_letter(reason)` republishes to `<topic>.DLQ` with the reason header, then settles.
Nothing survives the process: durability comes from the outbox and the run table, not here.
"""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ragline.application.ports.messaging import MessageBusError
from ragline.contracts.wire.topics import (
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
    dead_letter_topic,
)

DEFAULT_RETENTION = 100_000


@dataclass(frozen=True, slots=True)
class _Record:
    offset: int
    body: bytes
    routing_key: str | None
    headers: Mapping[str, str]


@dataclass(slots=True)
class _Group:
    cursor: int
    returned: list[int] = field(default_factory=list)  # heap of offsets to deliver again
    in_flight: set[int] = field(default_factory=set)

    def low_watermark(self) -> int:
        return min([self.cursor, *self.returned, *self.in_flight])


class _Topic:
    def __init__(self, retention: int) -> None:
        self.retention = retention
        self.base = 0  # offset of records[0]
        self.records: deque[_Record] = deque()
        self.groups: dict[str, _Group] = {}
        self.changed = asyncio.Condition()

    def append(self, body: bytes, routing_key: str | None, headers: Mapping[str, str]) -> None:
        offset = self.base + len(self.records)
        self.records.append(_Record(offset, body, routing_key, MappingProxyType(dict(headers))))
        while len(self.records) > self.retention:
            self.records.popleft()
            self.base += 1

    def group(self, name: str) -> _Group:
        if name not in self.groups:
            self.groups[name] = _Group(cursor=self.base)
        return self.groups[name]

    def claim(self, group: _Group) -> _Record | None:
        while group.returned:
            offset = heapq.heappop(group.returned)
            if offset >= self.base:
                return self._take(group, offset)
        group.cursor = max(group.cursor, self.base)
        if group.cursor < self.base + len(self.records):
            group.cursor += 1
            return self._take(group, group.cursor - 1)
        return None

    def _take(self, group: _Group, offset: int) -> _Record:
        group.in_flight.add(offset)
        return self.records[offset - self.base]

    def trim(self) -> None:
        """Drop what every group has settled (kept while no group exists yet)."""
        if not self.groups:
            return
        keep_from = min(group.low_watermark() for group in self.groups.values())
        while self.records and self.base < keep_from:
            self.records.popleft()
            self.base += 1


class InProcessBus:
    """Shared by the publishers and sources of one process; create one in bootstrap."""

    def __init__(self, *, retention: int = DEFAULT_RETENTION) -> None:
        self._retention = retention
        self._topics: dict[str, _Topic] = {}

    def topic(self, name: str) -> _Topic:
        if name not in self._topics:
            self._topics[name] = _Topic(self._retention)
        return self._topics[name]

    async def publish(
        self,
        topic: str,
        body: bytes,
        routing_key: str | None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        state = self.topic(topic)
        state.append(bytes(body), routing_key, headers or {})
        async with state.changed:
            state.changed.notify_all()


class InProcessPublisher:
    """Publisher over one topic of an InProcessBus."""

    def __init__(self, bus: InProcessBus, topic: str) -> None:
        self._bus = bus
        self.topic = topic

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        await self._bus.publish(self.topic, body, routing_key, headers)

    async def close(self) -> None:
        """Nothing to release; present for lifecycle symmetry with the broker adapters."""


@dataclass(eq=False, slots=True)
class InProcessDelivery:
    body: bytes
    routing_key: str | None
    headers: Mapping[str, str]
    topic: str
    _source: InProcessTaskSource
    _offset: int
    _settled: bool = False

    async def ack(self) -> None:
        if self._settle():
            self._source._settled(self._offset)

    async def dead_letter(self, reason: str) -> None:
        if self._settled:
            return
        self._source._check_open()
        headers = {**self.headers, DEAD_LETTER_REASON_HEADER: reason}
        headers[DEAD_LETTER_ORIGIN_HEADER] = self.topic
        await self._source.bus.publish(
            dead_letter_topic(self.topic), self.body, self.routing_key, headers
        )
        if self._settle():
            self._source._settled(self._offset)

    def _settle(self) -> bool:
        if self._settled:
            return False
        self._source._check_open()
        self._settled = True
        return True


class InProcessTaskSource:
    """TaskSource: one member of consumer group `group` on `topic`."""

    def __init__(self, bus: InProcessBus, topic: str, group: str) -> None:
        self.bus = bus
        self.topic = topic
        self._state = bus.topic(topic)
        self._group = self._state.group(group)
        self._mine: set[int] = set()
        self._closed = False

    def __aiter__(self) -> InProcessTaskSource:
        return self

    async def __anext__(self) -> InProcessDelivery:
        async with self._state.changed:
            while True:
                if self._closed:
                    raise StopAsyncIteration
                record = self._state.claim(self._group)
                if record is not None:
                    self._mine.add(record.offset)
                    return InProcessDelivery(
                        body=record.body,
                        routing_key=record.routing_key,
                        headers=record.headers,
                        topic=self.topic,
                        _source=self,
                        _offset=record.offset,
                    )
                await self._state.changed.wait()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for offset in self._mine:
            self._group.in_flight.discard(offset)
            heapq.heappush(self._group.returned, offset)
        self._mine.clear()
        async with self._state.changed:
            self._state.changed.notify_all()

    async def __aenter__(self) -> InProcessTaskSource:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise MessageBusError("source closed: the delivery will be delivered again")

    def _settled(self, offset: int) -> None:
        self._mine.discard(offset)
        self._group.in_flight.discard(offset)
        self._state.trim()
