"""Background work port: blocking work that must yield the CPU to requests (a re-embedding
copy's model calls beside a server answering searches on the same cores)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


class BackgroundWork(Protocol):
    async def run(self, work: Callable[[], T]) -> T:
        """`work()` off the event loop, at a priority below the process's requests."""
        ...

    def close(self) -> None: ...
