"""Loaded scope arrays kept between queries, keyed by (kind, scope id) and tagged with the
scope's generation: a query whose generation differs reloads, so a write from any process
invalidates them. Bounded by bytes, least recently used first out."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar


class Sized(Protocol):
    @property
    def nbytes(self) -> int: ...


V = TypeVar("V", bound=Sized)
Key = tuple[str, int]


class ScopeCache(Generic[V]):
    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._entries: OrderedDict[Key, tuple[int, V]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Key, generation: int) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != generation:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Key, generation: int, value: V) -> None:
        """Keep `value`; the newest entry stays even if it alone exceeds the budget (the
        query that loaded it is using it anyway)."""
        with self._lock:
            self._pop(key)
            self._entries[key] = (generation, value)
            self._bytes += value.nbytes
            while self._bytes > self._max_bytes and len(self._entries) > 1:
                self._pop(next(iter(self._entries)))

    def drop(self, key: Key) -> None:
        """Forget arrays this process just made stale by a write: they would otherwise stay
        resident through a long ingest until the next query of that scope."""
        with self._lock:
            self._pop(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _pop(self, key: Key) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[1].nbytes
