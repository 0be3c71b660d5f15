"""Which offset a consumer may commit while several deliveries of a partition are in flight.

Kafka commits a position (the next offset to read), not individual messages. A worker that
runs several tasks of one partition at once finishes them out of order, so it may only
commit up to the lowest offset still unsettled: everything below is durable, everything
from there on is delivered again after a crash (and answered from the task_id barrier).
"""

from __future__ import annotations

from typing import Generic, TypeVar

Partition = TypeVar("Partition")


class CommitWindow:
    """One partition: offsets handed out and not yet settled, and what may be committed.

    `settled` returns the new position to commit, or None when it would not move forward:
    never past an unsettled offset, and once everything handed out is settled, just past
    the highest offset seen.
    """

    __slots__ = ("_committed", "_next", "_pending")

    def __init__(self) -> None:
        self._pending: set[int] = set()
        self._next = 0
        self._committed = -1

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    @property
    def committed(self) -> int | None:
        """The last position returned by `settled`, None before the first."""
        return None if self._committed < 0 else self._committed

    def delivered(self, offset: int) -> None:
        self._pending.add(offset)
        self._next = max(self._next, offset + 1)

    def settled(self, offset: int) -> int | None:
        self._pending.discard(offset)
        position = min(self._pending) if self._pending else self._next
        if position <= self._committed:
            return None
        self._committed = position
        return position


class PartitionOffsets(Generic[Partition]):
    """A CommitWindow per assigned partition, and an epoch per partition that a revocation
    bumps, so a delivery from before a rebalance is recognised as stale."""

    def __init__(self) -> None:
        self.epoch: dict[Partition, int] = {}
        self._windows: dict[Partition, CommitWindow] = {}

    def delivered(self, tp: Partition, offset: int) -> int:
        """Record a handed-out offset; returns the partition's current epoch."""
        self._windows.setdefault(tp, CommitWindow()).delivered(offset)
        return self.epoch.setdefault(tp, 0)

    def settled(self, tp: Partition, offset: int) -> int | None:
        """The offset to commit now, or None when nothing new can be committed."""
        window = self._windows.get(tp)
        return None if window is None else window.settled(offset)

    def revoked(self, tps: set[Partition]) -> None:
        for tp in tps:
            self.epoch[tp] = self.epoch.get(tp, 0) + 1
            self._windows.pop(tp, None)


__all__ = ["CommitWindow", "PartitionOffsets"]
