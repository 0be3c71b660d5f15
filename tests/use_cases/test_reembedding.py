"""The re-embedding use cases (issue 21): plan, the worker step (start, leased batches,
catch-up, swap), a worker killed mid-copy, cancel; tenant B is never touched. Each runs on the
fakes and on real stores (SQLite + the embedded vector index)."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.application.ports.embedder import Embedder
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    VectorIndex,
    VectorSpace,
    VectorSpaces,
)
from ragline.application.reembedding import (
    AlreadyReembedding,
    ReembeddingNotFound,
    Reembeddings,
    progress,
)
from ragline.domain.parse_run import BEGIN_INDEXING, COMPLETE
from ragline.domain.reembedding import CopyBatch, EmbeddingSpec, Generations, ReembeddingStatus
from ragline.testing.kits.persistence import children, chunk_set, scope
from tests.fakes.indexes import FakeVectorIndex
from tests.fakes.models import FakeEmbedder
from tests.fakes.unit_of_work import FakeDatabase

T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
OLD, NEW = 4, 3
TARGET = EmbeddingSpec("fake", "fake-3", NEW)


def target(user: str) -> EmbeddingConfig:
    """The whole config a user asks for: the copy must embed with exactly this."""
    return EmbeddingConfig(user, "fake", "fake-3", NEW, "http://models.test/v1", "sk-new")


class Models:
    """EmbedderResolver giving one shared embedder per (model, base_url, key) asked for."""

    def __init__(self) -> None:
        self.asked: list[EmbeddingConfig] = []
        self.by_model: dict[str, FakeEmbedder] = {}

    def embedder(self, model: str, dimension: int) -> FakeEmbedder:
        return self.by_model.setdefault(model, FakeEmbedder(dimension))

    async def resolve(self, config: EmbeddingConfig) -> Embedder:
        self.asked.append(config)
        if config.provider == "unknown":
            raise UnusableEmbeddingConfig(f"unknown provider {config.provider!r}")
        return self.embedder(config.model, config.dimension)

    async def probe(self, config: EmbeddingConfig) -> int:
        return (await self.resolve(config)).dimension


async def indexed_document(
    db: UnitOfWorkFactory, index: VectorIndex, user: str, doc_id: str | None = None, **shape: int
) -> list[str]:
    """One document's chunks stored with dense SUCCESS and their generation-0 points."""
    where = scope(user, doc_id=doc_id)
    records = chunk_set(where, "t1", **shape)
    kids = children(records)
    ids = [c.chunk_id for c in kids]
    async with db() as uow:
        await uow.chunks.replace_document(where, records)
        await uow.chunks.move_dense(where, ids, BEGIN_INDEXING)
        await uow.chunks.move_dense(where, ids, COMPLETE)
        await uow.commit()
    await index.upsert_dense(
        [
            DensePoint(i, [1.0, 0, 0, 0], ChunkPayload(user, where.dataset_id, where.doc_id, "p"))
            for i in ids
        ]
    )
    return ids


class World:
    def __init__(self, db: UnitOfWorkFactory, index: VectorIndex, spaces: VectorSpaces) -> None:
        self.db, self.index, self.spaces = db, index, spaces
        self.models = Models()
        self.embedder = self.models.embedder("fake-3", NEW)
        self.use = Reembeddings(db, spaces, self.models, batch_size=2)

    async def points(self, space: VectorSpace, user: str) -> set[str]:
        index = await self.spaces.in_space(space)
        probe = [1.0] + [0.0] * (space.dimension - 1)
        return {hit.chunk_id for hit in await index.query_dense(user, "d1", probe, 1000)}

    async def config(self, user: str) -> EmbeddingConfig | None:
        async with self.db() as uow:
            return await uow.model_configs.default_embedding(user)

    async def gens(self, user: str) -> Generations:
        async with self.db() as uow:
            return await uow.reembeddings.generations(user)

    async def run_out(self, owner: str, now: datetime, limit: int = 100) -> int:
        return await self.run_out_with(self.use, owner, now, limit)

    async def run_out_with(
        self, use: Reembeddings, owner: str, now: datetime, limit: int = 100
    ) -> int:
        steps = 0
        while await use.step(owner, now):
            steps += 1
            assert steps < limit
        return steps

    async def db_batches(self, rid: str) -> list[CopyBatch]:
        async with self.db() as uow:
            return await uow.reembeddings.batches(rid)


@pytest.fixture(params=["fakes", "sqlite+embedded"])
async def world(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    if request.param == "fakes":
        fake = FakeVectorIndex(dimension=OLD)
        yield World(FakeDatabase(), fake, fake)
        return
    url = f"sqlite:///{tmp_path / 'ragline.db'}"
    upgrade_to_head(url)
    factory = create_unit_of_work_factory(url, cipher=ApiKeyCipher(ApiKeyCipher.generate_key()))
    index = EmbeddedVectorIndex(tmp_path / "vectors")
    await index.ensure_collection(OLD)
    yield World(factory, index, index)
    await index.close()
    await factory.dispose()


async def test_plan_copy_swap_leaves_tenant_b_alone(world: World) -> None:
    a = await indexed_document(world.db, world.index, "A")
    b = await indexed_document(world.db, world.index, "B")
    item = await world.use.plan("r1", "A", target("A"), T0, source_dimension=OLD)
    with pytest.raises(AlreadyReembedding):
        await world.use.plan("r2", "A", TARGET, T0, source_dimension=OLD)
    assert await world.gens("A") == Generations("A", active=0, shadow=1, newest=1, version=1)
    assert await world.config("A") is None  # the default moves only at the swap
    await world.run_out("w1", T0)
    assert set(world.models.asked) == {target("A")}  # exactly the model asked for, key too
    assert await world.config("A") == target("A")  # the swap made it the default
    assert await world.config("B") is None
    done = await world.use.get(item.id, "A")
    assert (done.status, done.done, done.total) == (ReembeddingStatus.SWAPPED, len(a), len(a))
    assert (await world.gens("A")).active == 1
    assert (await world.points(VectorSpace(1, NEW), "A")) == set(a)
    assert (await world.points(VectorSpace(0, OLD), "A")) == set()  # the old generation swept
    assert (await world.points(VectorSpace(0, OLD), "B")) == set(b)
    assert await world.gens("B") == Generations("B")
    assert len(world.embedder.embedded) == len(a)  # each chunk once
    shown = progress(done, T0 + timedelta(seconds=2))
    assert (shown.done, shown.total, shown.eta_s) == (len(a), len(a), 0.0)


async def test_a_worker_killed_mid_copy_is_taken_over_after_its_lease(world: World) -> None:
    a = await indexed_document(world.db, world.index, "A")
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    assert await world.use.step("w1", T0)  # start: batches planned
    async with world.db() as uow:  # a worker claims a batch, then is SIGKILLed
        dead = await uow.reembeddings.claim_batch("r1", "dead", T0, T0 + world.use.lease)
        await uow.commit()
    assert dead is not None
    await world.run_out("w2", T0 + timedelta(seconds=1))  # the rest, not the dead one's
    assert (await world.use.get("r1", None)).status is ReembeddingStatus.COPYING
    await world.run_out("w2", T0 + world.use.lease + timedelta(seconds=1))
    assert (await world.use.get("r1", None)).status is ReembeddingStatus.SWAPPED
    assert (await world.points(VectorSpace(1, NEW), "A")) == set(a)
    assert max(Counter(world.embedder.embedded).values()) == 1  # the dead one never embedded


class MovableClock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


async def test_a_batch_that_outlasts_its_lease_is_renewed_not_taken_over(world: World) -> None:
    """The model is slower than the lease: the holder renews it every third of it, so
    another worker past the first lease's end finds nothing to take over."""
    a = await indexed_document(world.db, world.index, "A", parents=1, per_parent=2)
    clock = MovableClock(T0)
    lease = timedelta(milliseconds=300)
    use = attrs.evolve(world.use, lease=lease, clock=clock, batch_size=len(a))
    await use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    assert await use.step("w1", T0)  # start: one batch
    loop = asyncio.get_running_loop()
    later = T0 + timedelta(minutes=10)  # the first claim's lease ended long ago
    seen: list[bool] = []

    async def renewed() -> bool:
        [batch] = await world.db_batches("r1")
        return batch.lease_until is not None and batch.lease_until > later

    class Slow(FakeEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            clock.at = later  # renewals from now on extend past `later`
            for _ in range(500):  # renewals come every 0.1 s
                if asyncio.run_coroutine_threadsafe(renewed(), loop).result():
                    break
                threading.Event().wait(0.02)
            else:
                raise AssertionError("the lease was never renewed")
            seen.append(asyncio.run_coroutine_threadsafe(use.step("w2", later), loop).result())
            return super().embed_documents(texts)

    world.models.by_model["fake-3"] = Slow(NEW)
    assert await use.step("w1", T0)  # claims the batch; embeds slowly
    assert seen == [False]  # w2 found the batch held
    assert await world.run_out_with(use, "w1", later) >= 1
    item = await use.get("r1", None)
    assert item.status is ReembeddingStatus.SWAPPED
    [batch] = await world.db_batches("r1")
    assert batch.claims == 1  # never taken over


async def test_chunks_landing_during_the_copy_are_caught_up_before_the_swap(
    world: World,
) -> None:
    first = await indexed_document(world.db, world.index, "A")
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    assert await world.use.step("w1", T0)  # start
    later = await indexed_document(world.db, world.index, "A")  # a run lands meanwhile
    await world.run_out("w1", T0)
    item = await world.use.get("r1", "A")
    assert item.status is ReembeddingStatus.SWAPPED
    assert item.total == len(first) + len(later)
    assert (await world.points(VectorSpace(1, NEW), "A")) == set(first) | set(later)


async def test_cancel_keeps_the_old_generation_and_removes_the_new(world: World) -> None:
    a = await indexed_document(world.db, world.index, "A")
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    for _ in range(3):
        assert await world.use.step("w1", T0)  # start and two batches
    assert await world.points(VectorSpace(1, NEW), "A")
    cancelled = await world.use.cancel("r1", "A", T0)
    assert cancelled.status is ReembeddingStatus.CANCELLED
    assert (await world.points(VectorSpace(1, NEW), "A")) == set()
    assert (await world.points(VectorSpace(0, OLD), "A")) == set(a)
    assert (await world.gens("A")).shadow is None
    assert not await world.use.step("w1", T0)  # nothing left to do
    again = await world.use.plan("r2", "A", TARGET, T0, source_dimension=OLD)
    assert again.target_generation == 2  # a cancelled number is not given again


async def test_another_tenant_cannot_see_or_cancel_it(world: World) -> None:
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    with pytest.raises(ReembeddingNotFound):
        await world.use.get("r1", "B")
    with pytest.raises(ReembeddingNotFound):
        await world.use.cancel("r1", "B", T0)


async def test_a_model_of_the_wrong_dimension_fails_it_and_drops_the_shadow(
    world: World,
) -> None:
    a = await indexed_document(world.db, world.index, "A")
    world.embedder.output_dimension = NEW + 1  # the model answers another length
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    await world.run_out("w1", T0)
    item = await world.use.get("r1", "A")
    assert item.status is ReembeddingStatus.FAILED
    assert item.error is not None and item.error.startswith("EMBEDDING_DIMENSION_UNSUPPORTED")
    assert (await world.gens("A")).shadow is None
    assert (await world.gens("A")).active == 0
    assert (await world.points(VectorSpace(0, OLD), "A")) == set(a)


async def test_a_config_that_cannot_give_a_model_fails_it(world: World) -> None:
    a = await indexed_document(world.db, world.index, "A")
    unusable = EmbeddingConfig("A", "unknown", "m", NEW)
    await world.use.plan("r1", "A", unusable, T0, source_dimension=OLD)
    await world.run_out("w1", T0)
    item = await world.use.get("r1", "A")
    assert item.status is ReembeddingStatus.FAILED
    assert item.error is not None and item.error.startswith("LLM_CONFIG_MISSING")
    assert await world.config("A") is None
    assert (await world.points(VectorSpace(0, OLD), "A")) == set(a)


async def test_a_config_of_another_user_is_refused(world: World) -> None:
    with pytest.raises(ValueError, match="cannot re-embed"):
        await world.use.plan("r1", "A", target("B"), T0, source_dimension=OLD)
    assert await world.gens("A") == Generations("A")


async def test_a_range_whose_chunks_were_replaced_by_as_many_is_caught_up(world: World) -> None:
    """doc-m's 6 children make 3 batches; after the first is copied doc-m goes and doc X's 2
    children land inside that first range: the count is the same, the ids are not."""
    await indexed_document(world.db, world.index, "A", doc_id="doc-m")
    await world.use.plan("r1", "A", TARGET, T0, source_dimension=OLD)
    assert await world.use.step("w1", T0)  # start: 3 batches
    assert await world.use.step("w1", T0)  # batch 0 copied: doc-m-p0-c0, doc-m-p0-c1
    async with world.db() as uow:
        await uow.chunks.delete_document(scope("A", doc_id="doc-m"))
        await uow.commit()
    x = await indexed_document(
        world.db, world.index, "A", doc_id="doc-m-p0-c0x", parents=2, per_parent=1
    )
    async with world.db() as uow:
        (first, *_) = await uow.reembeddings.batches("r1")
    assert all(first.first_chunk_id <= i <= first.last_chunk_id for i in x) and len(x) == 2
    await world.run_out("w1", T0)
    assert (await world.use.get("r1", "A")).status is ReembeddingStatus.SWAPPED
    assert (await world.points(VectorSpace(1, NEW), "A")) >= set(x)
