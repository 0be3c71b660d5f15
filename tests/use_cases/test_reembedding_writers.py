"""The writers besides VECTORIZING and the copy follow the user's generations (issue 21):
after a swap to another dimension a document delete, a metadata PUT, a chunk switched off
and on and a chunk edit act on generation 1 (and 0, which keeps the sparse vectors); during
a copy a delete and a relabel reach the shadow too, and an edit's new text is copied into it;
a delete racing a copy batch leaves no point of the document in the shadow.
On the fakes through the real container, as tests/use_cases/test_reembedding_generations.py."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
import pytest

from ragline.application.access import Caller
from ragline.application.documents import ChunkChange, DeleteDocument, EditChunk
from ragline.application.documents.metadata import SetDocumentMetadata
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.vector_index import VectorSpace
from ragline.application.provisioning import ManageModelConfigs
from ragline.application.reembedding import Reembeddings
from ragline.application.search.spaces import user_indexes
from ragline.application.search.use_case import HybridSearch
from ragline.domain.metadata import DocumentMetadata, Eq, MetadataFilter
from ragline.domain.reembedding import ReembeddingStatus
from ragline.testing.kits.persistence import scope
from tests.fakes.harness import Harness
from tests.fakes.indexes import FakeVectorIndex
from tests.fakes.models import FakeEmbedder
from tests.use_cases.test_reembedding import NEW as SMALL
from tests.use_cases.test_reembedding import OLD, World, indexed_document, target, world
from tests.use_cases.test_reembedding_generations import (
    NEW,
    QUERY,
    T0,
    TARGET,
    dense_of,
    gen1,
    h,
    swap_user_7,
)

__all__ = ["h", "world"]  # the fixtures: users 7 and 8 indexed; fakes, and SQLite + embedded

DOC = ("7", "3", "100")


def sparse_of(index: FakeVectorIndex, user: str) -> set[str]:
    return {key[2] for key, p in index.points.items() if key[0] == user and p.sparse is not None}


def children(h: Harness) -> list[ChunkRecord]:
    return [c for c in h.db.chunks_of(h.scope(h.task("md"))) if not c.is_parent]


async def dense_hits(
    h: Harness, query: str = QUERY, where: MetadataFilter | None = None
) -> list[str]:
    search: HybridSearch = h.container.hybrid_search()
    [trace] = await search.trace_many([query], "7", "3", 5, where)
    assert trace.degraded == ()
    return [hit.chunk_id for hit in trace.rankings["dense"]]


async def plan_and_copy_one_batch(h: Harness) -> tuple[Reembeddings, str]:
    """User 7's re-embedding to TARGET, started and one batch copied into generation 1."""
    manage: ManageModelConfigs = h.container.model_configs()
    change = await manage.set_embedding(TARGET, reembed=True)
    assert change.reembedding_id is not None
    use: Reembeddings = h.container.reembeddings()
    assert await use.step("w1", T0)  # PLANNED -> COPYING
    assert await use.step("w1", T0)  # a batch copied
    item = await use.get(change.reembedding_id, "7")
    assert item.status is ReembeddingStatus.COPYING and item.done
    assert dense_of(gen1(h), "7")
    return use, change.reembedding_id


async def finish(use: Reembeddings, reembedding_id: str) -> None:
    steps = 0
    while await use.step("w1", T0):
        steps += 1
        assert steps < 100
    assert (await use.get(reembedding_id, "7")).status is ReembeddingStatus.SWAPPED


async def test_a_user_who_never_reembedded_costs_one_read(h: Harness) -> None:
    async with h.db() as uow:
        indexes = await user_indexes(uow, h.vectors, "7")
    assert indexes.all == [h.vectors] and indexes.shadow is None


async def test_after_a_swap_a_delete_removes_the_document_from_generation_1_and_0(
    h: Harness,
) -> None:
    await swap_user_7(h)
    assert dense_of(gen1(h), "7") and sparse_of(h.vectors, "7")
    delete: DeleteDocument = h.container.delete_document()
    await delete(*DOC)
    assert dense_of(gen1(h), "7") == set()
    assert sparse_of(h.vectors, "7") == set() and dense_of(h.vectors, "7") == set()
    assert dense_of(h.vectors, "8")  # another tenant untouched


async def test_after_a_swap_metadata_relabels_generation_1(h: Harness) -> None:
    await swap_user_7(h)
    put: SetDocumentMetadata = h.container.set_document_metadata()
    await put(Caller.service(), *DOC, DocumentMetadata({"team": "red"}))
    assert await dense_hits(h, where=Eq("team", "red"))
    await put(Caller.service(), *DOC, DocumentMetadata({"team": "blue"}))
    found = await dense_hits(h, where=Eq("team", "blue"))
    assert found and set(found) <= dense_of(gen1(h), "7")
    assert await dense_hits(h, where=Eq("team", "red")) == []


async def test_after_a_swap_a_chunk_is_switched_off_on_and_edited_in_generation_1(
    h: Harness,
) -> None:
    await swap_user_7(h)
    kid = children(h)[0]
    edit: EditChunk = h.container.edit_chunk()
    await edit(*DOC, kid.chunk_id, ChunkChange(enabled=False))
    assert kid.chunk_id not in dense_of(gen1(h), "7")
    assert kid.chunk_id not in sparse_of(h.vectors, "7")
    await edit(*DOC, kid.chunk_id, ChunkChange(enabled=True))
    assert kid.chunk_id in dense_of(gen1(h), "7")
    assert kid.chunk_id in sparse_of(h.vectors, "7")
    assert kid.chunk_id not in dense_of(h.vectors, "7")  # generation 0 holds no dense now
    text = "zebra quartz nebula, an edited text"
    done = await edit(*DOC, kid.chunk_id, ChunkChange(text=text))
    assert done.text == text and done.edited
    assert len(gen1(h).points[("7", "3", kid.chunk_id)].vector or ()) == NEW
    assert (await dense_hits(h, text))[0] == kid.chunk_id


async def test_during_a_copy_a_delete_removes_the_shadow_points_too(h: Harness) -> None:
    use, rid = await plan_and_copy_one_batch(h)
    delete: DeleteDocument = h.container.delete_document()
    await delete(*DOC)
    assert dense_of(gen1(h), "7") == set() and dense_of(h.vectors, "7") == set()
    await finish(use, rid)
    assert dense_of(gen1(h), "7") == set()


async def test_during_a_copy_a_relabel_and_an_edit_reach_the_shadow(h: Harness) -> None:
    use, rid = await plan_and_copy_one_batch(h)
    put: SetDocumentMetadata = h.container.set_document_metadata()
    await put(Caller.service(), *DOC, DocumentMetadata({"team": "blue"}))
    shadow = gen1(h)
    assert {p.payload.metadata.get("team") for k, p in shadow.points.items() if k[0] == "7"} == {
        "blue"
    }
    kid = children(h)[0]
    text = "zebra quartz nebula, edited during the copy"
    edit: EditChunk = h.container.edit_chunk()
    await edit(*DOC, kid.chunk_id, ChunkChange(text=text))
    await finish(use, rid)
    assert (await dense_hits(h, text, Eq("team", "blue")))[0] == kid.chunk_id
    assert await dense_hits(h, where=Eq("team", "red")) == []


async def test_the_indexes_of_a_user_through_a_copy_and_a_swap(world: World) -> None:
    """The rule on fakes and on SQLite + the embedded index: the base index alone (before and
    while PLANNED), then the shadow beside it once it copies (at the target's dimension), then
    the new active generation; a delete
    through them leaves no point in any, a relabel reaches the new generation's filter."""
    await indexed_document(world.db, world.index, "A", doc_id="gone")
    kept = await indexed_document(world.db, world.index, "A", doc_id="kept")
    async with world.db() as uow:
        assert (await user_indexes(uow, world.index, "A")).all == [world.index]
    await world.use.plan("r1", "A", target("A"), T0, source_dimension=OLD)
    async with world.db() as uow:  # PLANNED: the shadow holds nothing, its copy reads later
        assert (await user_indexes(uow, world.index, "A")).all == [world.index]
    for _ in range(2):
        assert await world.use.step("w1", T0)  # start, one batch copied
    shadow_space = VectorSpace(1, SMALL)
    assert await world.points(shadow_space, "A")
    async with world.db() as uow:
        during = await user_indexes(uow, world.index, "A")
    assert during.active.index is world.index and during.shadow is not None
    assert during.shadow.config == target("A") and len(during.all) == 2
    for index in during.all:  # as DeleteDocument does, then the rows go
        await index.delete_document("A", "d1", "gone")
    assert await world.points(shadow_space, "A") == set()  # the one batch was "gone"'s
    async with world.db() as uow:
        await uow.chunks.delete_document(scope("A", doc_id="gone"))
        await uow.commit()
    await world.run_out("w1", T0)
    assert (await world.use.get("r1", "A")).status is ReembeddingStatus.SWAPPED
    assert await world.points(shadow_space, "A") == set(kept)
    async with world.db() as uow:
        after = await user_indexes(uow, world.index, "A")
    assert after.shadow is None and after.active.generation == 1
    assert after.active.config == target("A") and len(after.all) == 2
    for index in after.all:
        await index.relabel_document("A", "d1", "kept", DocumentMetadata({"team": "blue"}))
    probe = [1.0] + [0.0] * (SMALL - 1)
    blue = await after.active.index.query_dense("A", "d1", probe, 100, Eq("team", "blue"))
    assert {hit.chunk_id for hit in blue} == set(kept)
    assert await after.active.index.query_dense("A", "d1", probe, 100, Eq("team", "red")) == []


async def test_a_document_deleted_while_a_batch_embeds_leaves_no_point_in_the_shadow(
    world: World,
) -> None:
    """The batch read "gone"'s rows, then, while it embeds, the document is deleted (points
    from every index, then the rows, as DeleteDocument does): the batch's write comes after
    the delete's, and its range re-read takes those points out again."""
    gone = await indexed_document(world.db, world.index, "A", doc_id="gone")
    kept = await indexed_document(world.db, world.index, "A", doc_id="kept")
    await world.use.plan("r1", "A", target("A"), T0, source_dimension=OLD)
    assert await world.use.step("w1", T0)  # start: the first batch is two of gone's
    loop = asyncio.get_running_loop()

    async def delete_gone() -> None:
        async with world.db() as uow:
            indexes = await user_indexes(uow, world.index, "A")
        for index in indexes.all:
            await index.delete_document("A", "d1", "gone")
        async with world.db() as uow:
            await uow.chunks.delete_document(scope("A", doc_id="gone"))
            await uow.commit()

    deleted: list[bool] = []

    class DeletedMeanwhile(FakeEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            if not deleted:
                asyncio.run_coroutine_threadsafe(delete_gone(), loop).result()
                deleted.append(True)
            return super().embed_documents(texts)

    world.models.by_model["fake-3"] = DeletedMeanwhile(SMALL)
    await world.run_out("w1", T0)
    assert deleted and (await world.use.get("r1", "A")).status is ReembeddingStatus.SWAPPED
    shadow = await world.points(VectorSpace(1, SMALL), "A")
    assert shadow == set(kept) and not shadow & set(gone)


async def test_a_batch_written_between_the_deletes_points_and_rows_is_removed_after(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy batch that reads the rows and writes the shadow after DeleteDocument removed
    the shadow's points but before it removed the rows re-reads them still there: the
    delete's second pass over the shadow, after the rows went, removes what it wrote."""
    manage: ManageModelConfigs = h.container.model_configs()
    change = await manage.set_embedding(TARGET, reembed=True)
    assert change.reembedding_id is not None
    use = attrs.evolve(h.container.reembeddings(), batch_size=1)  # a batch per child
    assert len(children(h)) > 2
    for _ in range(2):
        assert await use.step("w1", T0)  # PLANNED -> COPYING, a batch copied
    rid = change.reembedding_id
    shadow = gen1(h)
    first_delete = shadow.delete_document
    copied: list[set[str]] = []

    async def delete_then_copy(user_id: str, dataset_id: str, doc_id: str) -> None:
        await first_delete(user_id, dataset_id, doc_id)
        if not copied:
            assert await use.step("w1", T0)  # the next batch, rows still there
            copied.append(dense_of(shadow, "7"))

    monkeypatch.setattr(shadow, "delete_document", delete_then_copy)
    delete: DeleteDocument = h.container.delete_document()
    await delete(*DOC)
    assert copied and copied[0]  # the batch did write the document into the shadow
    assert dense_of(shadow, "7") == set()
    await finish(use, rid)
    assert dense_of(gen1(h), "7") == set()
