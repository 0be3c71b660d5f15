"""BackgroundWork on one thread at a higher nice value (Linux: a thread's own priority).

A re-embedding copy embeds batch after batch on the cores `ragline serve` answers searches
on; measured on 2 cores (docs/benchmarks.md, re-embedding), a search during a copy took
1.5-2.5x its p95 at the same priority, 0.9x with the copy at nice 10. On Linux
`setpriority(PRIO_PROCESS, 0, n)` sets the calling thread's nice, and threads it starts later
(a model engine's OpenMP team is created by the first parallel call on this thread) inherit
it. Elsewhere, or where the nice cannot be raised, the work runs at the normal priority.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def _lower(nice: int) -> None:
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed: as is
        os.setpriority(os.PRIO_PROCESS, 0, min(max(nice, 0), 19))


class NicedThread:
    """One worker thread at `nice` (0: the process's own priority), shared by every caller."""

    def __init__(self, nice: int) -> None:
        self._pool = ThreadPoolExecutor(
            1, thread_name_prefix="ragline-background", initializer=_lower, initargs=(nice,)
        )

    async def run(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
