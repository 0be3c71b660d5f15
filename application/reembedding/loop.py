"""The re-embedding loop `ragline worker` and `ragline serve` run beside their other work, and
the foreground drive of `ragline models reembed run` (a laptop has no worker).

Each loop steps `Reembeddings.step(owner, now)` while it finds work and sleeps `poll` when it
finds none. Several loops (processes) share one re-embedding through its leased copy batches;
`owner` is unique per process, so a claim of a process that died is taken over once its lease
ran out. A failing step (the database or the model gone for a while) is logged and retried
after a back-off that doubles up to `BACKOFF_MAX`; it never ends the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import attrs

from ragline.application.ports.clock import Clock
from ragline.application.reembedding.use_cases import Reembeddings
from ragline.domain.reembedding import ACTIVE_REEMBEDDING, Reembedding

log = logging.getLogger("ragline.reembeddings")

BACKOFF_MAX = 60.0
STOP_WAIT = 30.0
"""How long leaving `running` waits for the step in hand (one batch) before cancelling it;
a cancelled batch's lease then runs out and another worker copies it."""


@attrs.frozen
class ReembeddingLoop:
    reembeddings: Reembeddings
    clock: Clock
    owner: str
    poll: timedelta = timedelta(seconds=2)

    async def step(self) -> bool:
        """One unit of work on any active re-embedding; False when there was none."""
        return await self.reembeddings.step(self.owner, self.clock.now())

    async def run(self, stop: asyncio.Event) -> None:
        """Step until `stop` is set: straight on while there is work, `poll` apart when
        there is none, doubling back-off after a failure."""
        backoff = 0.0
        while not stop.is_set():
            try:
                worked = await self.step()
            except Exception:  # a store or model outage: say so, keep the worker alive
                backoff = min(max(backoff * 2, self.poll.total_seconds()), BACKOFF_MAX)
                log.exception("re-embedding step failed; retrying in %.1f s", backoff)
                await _wait(stop, backoff)
                continue
            backoff = 0.0
            if not worked:
                await _wait(stop, self.poll.total_seconds())

    def running(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The loop in the background while inside; on leaving, the step in hand may end
        (at most `STOP_WAIT` seconds), then the loop stops."""

        async def itself() -> ReembeddingLoop:
            return self

        return running(itself)

    async def drive(
        self,
        reembedding_id: str | None,
        user_id: str | None,
        on_step: Callable[[list[Reembedding]], None] = lambda _: None,
    ) -> list[Reembedding]:
        """Step in the foreground until `reembedding_id` (None: every active one `user_id`
        may see) has ended; `on_step` sees the watched ones after each step. Other
        re-embeddings may be stepped on the way (step takes the oldest with work)."""
        watched = await self._watched(reembedding_id, user_id)
        while any(item.status in ACTIVE_REEMBEDDING for item in watched):
            if not await self.step():
                await asyncio.sleep(self.poll.total_seconds())  # others hold the batches
            watched = [await self.reembeddings.get(item.id, user_id) for item in watched]
            on_step(watched)
        return watched

    async def _watched(self, reembedding_id: str | None, user_id: str | None) -> list[Reembedding]:
        if reembedding_id is not None:
            return [await self.reembeddings.get(reembedding_id, user_id)]
        async with self.reembeddings.uow() as uow:
            active = await uow.reembeddings.list_active()
        return [item for item in active if user_id is None or item.user_id == user_id]


LoopBuild = Callable[[], Awaitable[ReembeddingLoop]]
"""A loop built on demand (`UseCases.reembedding_loop`): opening what it needs may fail."""


@contextlib.asynccontextmanager
async def running(build: LoopBuild) -> AsyncIterator[None]:
    """The loop `build` gives, run in the background while inside. It is built there too:
    a store or index out of reach when the process starts is logged and retried (the worker
    and `serve` start anyway), as a failing step is."""
    stop = asyncio.Event()
    task = asyncio.create_task(_built_and_run(build, stop))
    try:
        yield
    finally:
        stop.set()
        try:
            await asyncio.wait_for(task, timeout=STOP_WAIT)
        except TimeoutError:
            log.warning("the re-embedding loop did not stop in %.0f s", STOP_WAIT)


async def _built_and_run(build: LoopBuild, stop: asyncio.Event) -> None:
    backoff = 1.0
    while not stop.is_set():
        try:
            loop = await build()
        except Exception:
            log.exception("the re-embedding loop cannot start; retrying in %.0f s", backoff)
            await _wait(stop, backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)
            continue
        await loop.run(stop)
        return


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
