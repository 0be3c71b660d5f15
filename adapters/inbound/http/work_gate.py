"""WorkGate: CPU-heavy request work (chunk previews, synchronous extracts) runs off the event
loop, a bounded number at a time.

The event loop answers every request, /healthz included; a 2 MB chunk preview cut on it
stalled them all for seconds. Gated work holds one of `workers` slots while it runs (in a
worker thread, or waiting on the parser sandbox); a request finding `waiting` others already
queued for a slot is refused with 503 at once instead of holding its body in memory in an
ever longer queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from fastapi import HTTPException, Request, status

from ragline.adapters.inbound.http.problems import PROBLEM_JSON, Problem

T = TypeVar("T")
RETRY_AFTER_SECONDS = 5
BUSY: dict[int | str, dict[str, object]] = {
    503: {
        "model": Problem,
        "content": {PROBLEM_JSON: {}},
        "description": "Too many previews and extracts at once (Retry-After)",
    }
}


class WorkGate:
    def __init__(self, workers: int, waiting: int) -> None:
        if workers < 1 or waiting < 0:
            raise ValueError("a work gate needs at least one worker and no negative queue")
        self.workers = workers
        self.waiting = waiting
        self._limiter: anyio.CapacityLimiter | None = None  # made on the serving loop

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
        return self._limiter

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the block; 503 when `waiting` requests already wait for one."""
        limiter = self.limiter
        if limiter.available_tokens == 0 and limiter.statistics().tasks_waiting >= self.waiting:
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "too many previews and extracts at once; retry shortly",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        async with limiter:
            yield

    async def run(self, work: Callable[..., T], *args: object) -> T:
        """`work(*args)` in a worker thread, holding a slot."""
        async with self.slot():
            return await anyio.to_thread.run_sync(work, *args)


def gate_of(request: Request) -> WorkGate:
    gate: WorkGate = request.app.state.work_gate
    return gate
