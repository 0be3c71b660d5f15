"""Search and VECTORIZING follow the user's active embedding generation (issue 21), on the
fakes through the real container: set-embedding --reembed plans, the worker step copies and
swaps; then the swapped user is answered from (and indexes into) the new space with the new
model, another user from generation 0; a run that embedded while the swap committed follows
it into the new space before it ends."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.embedder import Embedder
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.vector_index import VectorSpace
from ragline.application.provisioning import ManageModelConfigs, ReembeddingUnavailable
from ragline.application.reembedding import Reembeddings
from ragline.application.search.use_case import HybridSearch
from ragline.domain.parse_run import PipelineStatus
from ragline.domain.reembedding import CopyBatch, Generations, Reembedding, ReembeddingStatus
from tests.fakes.harness import DIMENSION, Harness
from tests.fakes.indexes import FakeVectorIndex
from tests.fakes.models import FakeEmbedder

NEW = 5
QUERY = "alpha beta topic 3"
T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
TARGET = EmbeddingConfig("7", "fake", "fake-model-2", NEW, "http://models.test/v1", "sk-new")


@pytest.fixture
async def h(tmp_path: Path) -> Harness:
    """Users 7 and 8 on the fake model (DIMENSION), one document each indexed."""
    harness = Harness(tmp_path)
    for user in (7, 8):
        harness.configure_embedding(user)
        task = harness.task("md", user_id=user)
        await harness.pipeline.handle(task)
        assert harness.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    return harness


def dense_of(index: FakeVectorIndex, user: str) -> set[str]:
    return {key[2] for key, p in index.points.items() if key[0] == user and p.vector is not None}


def gen1(h: Harness) -> FakeVectorIndex:
    return h.vectors.spaces[VectorSpace(1, NEW)]


async def dense_ranking(h: Harness, user: str) -> list[str]:
    search: HybridSearch = h.container.hybrid_search()
    [trace] = await search.trace_many([QUERY], user, "3", 5)
    assert trace.degraded == ()
    return [hit.chunk_id for hit in trace.rankings["dense"]]


async def swap_user_7(h: Harness) -> None:
    manage: ManageModelConfigs = h.container.model_configs()
    change = await manage.set_embedding(TARGET, reembed=True)
    assert change.reembedding_id is not None
    assert h.db.configs["7"].model == "fake-model"  # the default moves only at the swap
    use: Reembeddings = h.container.reembeddings()
    steps = 0
    while await use.step("w1", T0):
        steps += 1
        assert steps < 100
    assert (await use.get(change.reembedding_id, "7")).status is ReembeddingStatus.SWAPPED


async def test_a_swapped_user_is_answered_from_the_new_space_another_from_gen_0(
    h: Harness,
) -> None:
    before = dense_of(h.vectors, "7")
    assert before and await dense_ranking(h, "7")  # from generation 0, the old model
    await swap_user_7(h)
    assert h.db.configs["7"] == TARGET  # the swap made the target the default
    assert dense_of(gen1(h), "7") == before
    assert dense_of(h.vectors, "7") == set()  # the old generation swept
    ranked = await dense_ranking(h, "7")
    assert ranked and set(ranked) <= dense_of(gen1(h), "7")
    assert h.embedders.embedders[-1].dimension == NEW  # queries embedded by the new model
    others = await dense_ranking(h, "8")
    assert others and set(others) <= dense_of(h.vectors, "8")
    assert dense_of(gen1(h), "8") == set()


async def test_vectorizing_writes_into_the_active_generation(h: Harness) -> None:
    await swap_user_7(h)
    mine = h.task("md", user_id=7, original_file_id=101, md_object_key="md/doc-101.md")
    theirs = h.task("md", user_id=8, original_file_id=102, md_object_key="md/doc-102.md")
    for task in (mine, theirs):
        await h.pipeline.handle(task)
        assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    async with h.db() as uow:
        gens = await uow.reembeddings.generations("7")
        new_children = {
            c.chunk_id for c in await uow.chunks.list_children(h.scope(mine), lineage=mine.task_id)
        }
    assert gens.active == 1
    assert new_children and new_children <= dense_of(gen1(h), "7")
    assert not new_children & dense_of(h.vectors, "7")
    assert {len(p.vector or ()) for p in gen1(h).points.values()} == {NEW}
    assert dense_of(h.vectors, "8") and not dense_of(gen1(h), "8")


class SwapMidway:
    """The resolver's old model commits user 7's swap (as the re-embedding's transaction
    would: the target config and generation 1) while it embeds its first batch."""

    def __init__(self, h: Harness) -> None:
        self.h, self.inner = h, h.embedders.resolve
        self.swapped = False

    async def resolve(self, config: EmbeddingConfig) -> Embedder:
        embedder = await self.inner(config)
        if config.dimension != DIMENSION:
            return embedder
        outer = self

        class Swapping(FakeEmbedder):
            def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
                if not outer.swapped:
                    outer.swapped = True
                    db = outer.h.db
                    db.generations["7"] = Generations("7", active=1, newest=1, version=2)
                    db.configs["7"] = TARGET
                return embedder.embed_documents(texts)

        return Swapping(DIMENSION)


async def test_a_run_that_embedded_while_the_swap_committed_follows_it(h: Harness) -> None:
    h.embedders.resolve = SwapMidway(h).resolve  # type: ignore[method-assign]
    task = h.task("md", user_id=7, original_file_id=103, md_object_key="md/doc-103.md")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    async with h.db() as uow:
        children = {
            c.chunk_id for c in await uow.chunks.list_children(h.scope(task), lineage=task.task_id)
        }
    assert children and children <= dense_of(gen1(h), "7")
    assert await dense_ranking(h, "7")


class Crash(BaseException):
    """The worker dies: nothing in the pipeline catches a BaseException."""


async def test_the_swap_waits_for_a_run_that_began_vectorizing(h: Harness) -> None:
    manage: ManageModelConfigs = h.container.model_configs()
    change = await manage.set_embedding(TARGET, reembed=True)
    assert change.reembedding_id is not None
    use: Reembeddings = h.container.reembeddings()
    h.faults.arm("vectors.upsert_sparse", Crash())  # past VECTORIZING, before SUCCESS
    task = h.task("md", user_id=7, original_file_id=104, md_object_key="md/doc-104.md")
    with pytest.raises(Crash):
        await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.PROCESSING
    while await use.step("w1", T0):
        pass
    item = await use.get(change.reembedding_id, "7")
    assert item.status is ReembeddingStatus.READY  # not swapped under the run
    assert h.db.configs["7"].model == "fake-model"
    await h.pipeline.handle(task)  # redelivered: the interrupted run ends (FAILED)
    assert h.run(task.task_id).is_terminal
    assert await use.step("w1", T0)
    assert (await use.get(change.reembedding_id, "7")).status is ReembeddingStatus.SWAPPED


async def test_a_run_that_lands_between_the_swaps_checks_and_its_commit_is_copied(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap race: a run begins VECTORIZING after the swap looked at the user's runs and
    reaches SUCCESS after it listed the chunks, so neither look saw it. Its vectors went
    into generation 0 only; the swap must not commit over it (then sweep them)."""
    manage: ManageModelConfigs = h.container.model_configs()
    change = await manage.set_embedding(TARGET, reembed=True)
    assert change.reembedding_id is not None
    use: Reembeddings = h.container.reembeddings()
    late = h.task("md", user_id=7, original_file_id=105, md_object_key="md/doc-105.md")
    listed = Reembeddings._missing
    landed: list[str] = []

    async def list_then_land(
        self: Reembeddings, item: Reembedding, batches: list[CopyBatch]
    ) -> list[str]:
        found = await listed(self, item, batches)
        if item.status is ReembeddingStatus.READY and not landed:  # the swap's own look
            landed.append(late.task_id)
            await h.pipeline.handle(late)
            assert h.run(late.task_id).pipeline_status is PipelineStatus.SUCCESS
        return found

    monkeypatch.setattr(Reembeddings, "_missing", list_then_land)
    steps = 0
    while await use.step("w1", T0):
        steps += 1
        assert steps < 100
    assert landed
    assert (await use.get(change.reembedding_id, "7")).status is ReembeddingStatus.SWAPPED
    async with h.db() as uow:
        children = {
            c.chunk_id for c in await uow.chunks.list_children(h.scope(late), lineage=late.task_id)
        }
    assert children and children <= dense_of(gen1(h), "7")


async def test_a_process_without_reembeddings_refuses_the_change(h: Harness) -> None:
    manage = ManageModelConfigs(h.db, h.embedders)  # no Reembeddings wired
    with pytest.raises(ReembeddingUnavailable):
        await manage.set_embedding(TARGET, reembed=True)
    assert h.db.configs["7"].model == "fake-model"
    assert h.db.reembeddings == {} and "7" not in h.db.generations


@pytest.mark.parametrize("headers", [False, True])
async def test_the_copy_embeds_what_vectorizing_embedded(tmp_path: Path, headers: bool) -> None:
    h = Harness(
        tmp_path,
        settings=PipelineSettings(
            embed_batch_size=3, sparse_batch_size=3, contextual_headers=headers
        ),
    )
    h.configure_embedding(7)
    task = h.task("md", user_id=7)
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    await swap_user_7(h)

    def texts(dimension: int) -> list[str]:
        by = [e for e in h.embedders.embedders if e.dimension == dimension]
        return sorted(t for e in by for t in e.embedded)

    assert texts(NEW) and texts(NEW) == texts(DIMENSION)
    assert any("\n\n" in t for t in texts(NEW)) is headers
