"""The re-embedding loop of `ragline worker`/`serve` (application/reembedding/loop.py) on SQLite
and the embedded vector index: two loops share one re-embedding through its leased batches,
a loop killed mid-batch leaves a claim another takes over once the lease ran out, a failing
step is logged and retried, and the metrics count what was committed."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from ragline.adapters.persistence.sql import create_unit_of_work_factory, upgrade_to_head
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.application.ports.metrics import NoMetrics
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import ChunkPayload, DensePoint, VectorSpace
from ragline.application.reembedding import Reembeddings
from ragline.application.reembedding.loop import ReembeddingLoop, running
from ragline.application.reembedding.manage import ManageReembeddings
from ragline.domain.parse_run import BEGIN_INDEXING, COMPLETE
from ragline.domain.reembedding import CopyBatchStatus, EmbeddingSpec, ReembeddingStatus
from ragline.testing.kits.persistence import children, chunk_set, scope
from tests.fakes.clock import FakeClock
from tests.fakes.models import FakeEmbedder

OLD, NEW = 4, 3
TARGET = EmbeddingSpec("fake", "fake-3", NEW)
LEASE = timedelta(minutes=2)
DEADLINE = 60.0


class SlowEmbedder(FakeEmbedder):
    """Takes a while per batch (so two loops interleave); `gate`, when set, holds every call
    until it opens (a worker stuck mid-batch)."""

    def __init__(self, seconds: float = 0.02) -> None:
        super().__init__(NEW)
        self.seconds = seconds
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(DEADLINE)
        time.sleep(self.seconds)
        return super().embed_documents(texts)


class OneModel:
    """The target's model whichever way Reembeddings asks for it: called with (user, spec),
    or resolved from a config as an EmbedderResolver."""

    def __init__(self, embedder: FakeEmbedder) -> None:
        self.embedder = embedder

    def __call__(self, user_id: str, spec: object) -> FakeEmbedder:
        return self.embedder

    async def resolve(self, config: object) -> FakeEmbedder:
        return self.embedder

    async def probe(self, config: object) -> int:
        return self.embedder.dimension


class RecordingMetrics(NoMetrics):
    def __init__(self) -> None:
        self.chunks = 0
        self.taken_over = 0
        self.entered: list[str] = []

    def chunks_reembedded(self, count: int) -> None:
        self.chunks += count

    def reembedding_entered(self, status: str) -> None:
        self.entered.append(status)

    def copy_batch_taken_over(self) -> None:
        self.taken_over += 1


class Store:
    def __init__(self, db: UnitOfWorkFactory, index: EmbeddedVectorIndex) -> None:
        self.db, self.index = db, index
        self.metrics = RecordingMetrics()
        self.clock = FakeClock()

    def use(self, embedder: FakeEmbedder, uow: UnitOfWorkFactory | None = None) -> Reembeddings:
        model = OneModel(embedder)
        return Reembeddings(  # type: ignore[arg-type]
            uow or self.db, self.index, model, batch_size=4, lease=LEASE, metrics=self.metrics
        )

    def loop(self, use: Reembeddings, owner: str) -> ReembeddingLoop:
        return ReembeddingLoop(use, self.clock, owner, poll=timedelta(milliseconds=20))

    async def documents(self, user: str, count: int) -> list[str]:
        ids: list[str] = []
        for number in range(count):
            where = scope(user)
            records = chunk_set(where, f"t{number}", parents=3, per_parent=4)
            kids = children(records)
            async with self.db() as uow:
                await uow.chunks.replace_document(where, records)
                await uow.chunks.move_dense(where, [c.chunk_id for c in kids], BEGIN_INDEXING)
                await uow.chunks.move_dense(where, [c.chunk_id for c in kids], COMPLETE)
                await uow.commit()
            payload = ChunkPayload(user, where.dataset_id, where.doc_id, "p")
            await self.index.upsert_dense(
                [DensePoint(c.chunk_id, [1.0, 0, 0, 0], payload) for c in kids]
            )
            ids += [c.chunk_id for c in kids]
        return ids

    async def points(self, space: VectorSpace, user: str) -> set[str]:
        index = await self.index.in_space(space)
        probe = [1.0] + [0.0] * (space.dimension - 1)
        return {hit.chunk_id for hit in await index.query_dense(user, "d1", probe, 10_000)}

    async def until(self, check: Callable[[], Awaitable[bool]], what: str) -> None:
        """Wait on a condition with a generous deadline (never a timed assertion)."""
        deadline = time.monotonic() + DEADLINE
        while not await check():
            assert time.monotonic() < deadline, f"{what}: not within {DEADLINE} s"
            await asyncio.sleep(0.02)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    url = f"sqlite:///{tmp_path / 'ragline.db'}"
    upgrade_to_head(url)
    factory = create_unit_of_work_factory(url)
    index = EmbeddedVectorIndex(tmp_path / "vectors")
    await index.ensure_collection(OLD)
    yield Store(factory, index)
    await index.close()
    await factory.dispose()


async def test_two_loops_share_one_reembedding(store: Store) -> None:
    a = await store.documents("A", 3)
    b = await store.documents("B", 1)
    embedder = SlowEmbedder()
    use = store.use(embedder)
    item = await use.plan("r1", "A", TARGET, store.clock.now(), source_dimension=OLD)

    async def swapped() -> bool:
        return (await use.get(item.id, None)).status is ReembeddingStatus.SWAPPED

    async with store.loop(use, "w1").running(), store.loop(use, "w2").running():
        await store.until(swapped, "the swap")
    async with store.db() as uow:
        batches = await uow.reembeddings.batches(item.id)
    assert {b.status for b in batches} == {CopyBatchStatus.DONE}
    assert {b.owner for b in batches} == {"w1", "w2"}  # both loops copied
    assert len(embedder.embedded) == len(a)  # each chunk embedded once: no batch twice
    assert await store.points(VectorSpace(1, NEW), "A") == set(a)
    assert await store.points(VectorSpace(0, OLD), "B") == set(b)
    assert store.metrics.chunks == len(a)
    assert store.metrics.entered == ["PLANNED", "COPYING", "READY", "SWAPPED"]
    assert store.metrics.taken_over == 0


async def test_a_loop_killed_mid_batch_is_taken_over_after_its_lease(store: Store) -> None:
    a = await store.documents("A", 2)
    stuck = SlowEmbedder()
    stuck.gate = threading.Event()
    dying = store.use(stuck)
    item = await dying.plan("r1", "A", TARGET, store.clock.now(), source_dimension=OLD)
    stop = asyncio.Event()
    killed = asyncio.create_task(store.loop(dying, "dead").run(stop))
    await asyncio.to_thread(stuck.entered.wait, DEADLINE)  # it holds a batch, mid-embedding
    killed.cancel()  # a SIGKILL: nothing is given back
    with pytest.raises(asyncio.CancelledError):
        await killed
    async with store.db() as uow:
        held = [b for b in await uow.reembeddings.batches(item.id) if b.owner == "dead"]
    assert [b.status for b in held] == [CopyBatchStatus.COPYING]

    healthy = SlowEmbedder(seconds=0)
    use = store.use(healthy)
    survivor = store.loop(use, "alive")
    while await survivor.step():  # every other batch; the dead one's is still leased
        pass
    assert (await use.get(item.id, None)).status is ReembeddingStatus.COPYING
    store.clock.advance(LEASE + timedelta(seconds=1))
    while await survivor.step():
        pass
    stuck.gate.set()
    shown = await ManageReembeddings(use, store.clock).status(item.id, "A")
    assert (shown.status, shown.done, shown.total) == (ReembeddingStatus.SWAPPED, len(a), len(a))
    async with store.db() as uow:
        batch = next(b for b in await uow.reembeddings.batches(item.id) if b.seq == held[0].seq)
    assert (batch.status, batch.owner, batch.claims) == (CopyBatchStatus.DONE, "alive", 2)
    assert len(healthy.embedded) == len(a)  # only the dead batch's chunks were its to redo
    assert store.metrics.taken_over == 1
    assert await store.points(VectorSpace(1, NEW), "A") == set(a)


class Flaky:
    """A unit-of-work factory that fails its first `failures` units (the database away)."""

    def __init__(self, inner: UnitOfWorkFactory, failures: int) -> None:
        self.inner, self.failures = inner, failures

    def __call__(self) -> UnitOfWork:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("database unreachable")
        return self.inner()


async def test_a_failing_step_is_logged_and_retried(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    a = await store.documents("A", 1)
    item = await store.use(SlowEmbedder(0)).plan(
        "r1", "A", TARGET, store.clock.now(), source_dimension=OLD
    )
    flaky = Flaky(store.db, failures=3)
    use = store.use(SlowEmbedder(0), uow=flaky)
    caplog.set_level(logging.ERROR, "ragline.reembeddings")

    async def swapped() -> bool:
        return (await use.get(item.id, None)).status is ReembeddingStatus.SWAPPED

    async def recovered() -> bool:
        return flaky.failures == 0

    async with store.loop(use, "w1").running():
        await store.until(recovered, "the outage")
        await store.until(swapped, "the swap after the outage")
    failed = [r for r in caplog.records if "re-embedding step failed" in r.getMessage()]
    assert len(failed) == 3
    assert await store.points(VectorSpace(1, NEW), "A") == set(a)


async def test_a_stop_cuts_the_idle_wait_short(store: Store) -> None:
    use = store.use(SlowEmbedder(0))
    loop = ReembeddingLoop(use, store.clock, "w1", poll=timedelta(hours=1))
    stop = asyncio.Event()
    running = asyncio.create_task(loop.run(stop))
    await asyncio.sleep(0.05)  # it found no work and waits an hour for the next look
    stop.set()
    await asyncio.wait_for(running, timeout=DEADLINE)


async def test_a_loop_that_cannot_start_is_built_again(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    await store.documents("A", 1)
    use = store.use(SlowEmbedder(0))
    item = await use.plan("r1", "A", TARGET, store.clock.now(), source_dimension=OLD)
    attempts: list[int] = []

    async def build() -> ReembeddingLoop:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("vector index unreachable")
        return store.loop(use, "w1")

    async def swapped() -> bool:
        return (await use.get(item.id, None)).status is ReembeddingStatus.SWAPPED

    caplog.set_level(logging.ERROR, "ragline.reembeddings")
    async with running(build):
        await store.until(swapped, "the swap once the loop could start")
    assert len(attempts) == 3
    assert sum("cannot start" in r.getMessage() for r in caplog.records) == 2
