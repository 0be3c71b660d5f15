"""Contract kit for the chunk repository (`uow.chunks`): replace and list a document,
page its children, tenant-scoped reads, status moves that are compare-and-sets, counts, and
lineages (a run's rows beside the live ones until its swap)."""

from __future__ import annotations

import attrs
import pytest

from ragline.application.ports.repositories.chunks import ChunkCounts, ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import (
    BEGIN_INDEXING,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
)
from ragline.testing.kits.persistence import (
    StoreContract,
    children,
    chunk_set,
    scope,
    uid,
)


def lineage_set(where: DocumentScope, task_id: str, **shape: int) -> list[ChunkRecord]:
    """A run's rows as CHUNKING writes them: ids carry the lineage, not live yet."""
    return [
        attrs.evolve(
            r,
            chunk_id=f"{task_id}:{r.chunk_id}",
            parent_id=None if r.parent_id is None else f"{task_id}:{r.parent_id}",
            live=False,
        )
        for r in chunk_set(where, task_id, **shape)
    ]


class ChunkRepositoryContract(StoreContract):
    """What every ChunkRepository must show; fixture `uow_factory`."""

    async def test_a_lineage_waits_beside_the_live_one_until_its_swap(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        doc, neighbour = scope(), scope(doc_id=uid("doc"))
        old, new = uid("task"), uid("task")
        live = chunk_set(doc, old)
        waiting = lineage_set(doc, new, parents=1, per_parent=2)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, live)
            await uow.chunks.replace_document(neighbour, chunk_set(neighbour, old, parents=1))
            assert await uow.chunks.replace_lineage(doc, new, waiting) == []
            await uow.commit()
        ids = [c.chunk_id for c in waiting]
        async with uow_factory() as uow:  # readers see the live lineage only
            assert await uow.chunks.get_many(doc.user_id, doc.dataset_id, ids) == []
            assert [p.chunk_id for p in await uow.chunks.list_parents(doc)] == [
                c.chunk_id for c in live if c.is_parent
            ]
            assert await uow.chunks.count_document(doc) == len(live)
            counts = await uow.chunks.document_counts(doc.user_id, doc.dataset_id, [doc.doc_id])
            assert counts[doc.doc_id].children == len(children(live))
            assert await uow.chunks.list_children(doc) == children(live)
            assert await uow.chunks.list_children(doc, lineage=new) == children(waiting)
        async with uow_factory() as uow:  # a resumed CHUNKING re-does its own lineage
            stale = await uow.chunks.replace_lineage(doc, new, waiting)
            await uow.commit()
        assert sorted(stale) == sorted(c.chunk_id for c in children(waiting))
        async with uow_factory() as uow:
            removed = await uow.chunks.swap_lineage(doc, new)
            await uow.commit()
        assert sorted(removed) == sorted(c.chunk_id for c in children(live))
        swapped = [attrs.evolve(c, live=True) for c in waiting]
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == swapped
            assert await uow.chunks.get_many(doc.user_id, doc.dataset_id, ids) == swapped
            assert len(await uow.chunks.list_document(neighbour)) == 4  # untouched
            assert await uow.chunks.swap_lineage(doc, new) == []  # swapped already
            assert await uow.chunks.swap_lineage(doc, uid("task")) == []  # no rows: no swap
            assert await uow.chunks.list_document(doc) == swapped

    async def test_a_retry_adopts_the_lineage_it_continues(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        doc = scope()
        first, retry = uid("task"), uid("task")
        async with uow_factory() as uow:
            await uow.chunks.replace_lineage(doc, first, lineage_set(doc, first, parents=1))
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.adopt_lineage(doc, first, retry) == 4
            assert await uow.chunks.adopt_lineage(doc, first, retry) == 0  # adopted already
            await uow.commit()
        async with uow_factory() as uow:
            rows = await uow.chunks.list_document(doc)
            assert {c.task_id for c in rows} == {retry}
            assert len(await uow.chunks.list_children(doc, lineage=retry)) == 3

    async def test_chunks_outside_the_scope_are_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        mine, other = scope(), scope()
        async with uow_factory() as uow:
            with pytest.raises(ValueError):
                await uow.chunks.replace_document(mine, chunk_set(other, uid("task")))

    async def test_replace_and_list_a_document(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        neighbour = scope(doc_id=uid("doc"))
        first = chunk_set(doc, uid("task"))
        kept = chunk_set(neighbour, uid("task"), parents=1)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, first)
            await uow.chunks.replace_document(neighbour, kept)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == first
            assert await uow.chunks.count_document(doc) == len(first)

        second = chunk_set(doc, uid("task"), parents=1, per_parent=2)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, second)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == second
            assert await uow.chunks.list_document(neighbour) == kept
            assert await uow.chunks.count_document(scope()) == 0

    async def test_children_are_paged_in_order(self, uow_factory: UnitOfWorkFactory) -> None:
        doc, neighbour = scope(), scope(doc_id=uid("doc"))
        records = chunk_set(doc, uid("task"), parents=3, per_parent=3)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, (r for r in records))  # consumed once
            await uow.chunks.replace_document(neighbour, chunk_set(neighbour, uid("task")))
            await uow.commit()
        children = [r for r in records if not r.is_parent]
        pages: list[list[ChunkRecord]] = []
        after = -1
        async with uow_factory() as uow:
            while page := await uow.chunks.list_children(doc, after_order_index=after, limit=4):
                pages.append(page)
                after = page[-1].order_index
            assert await uow.chunks.list_children(scope(), limit=4) == []
        assert [len(p) for p in pages] == [4, 4, 1]
        assert [r for p in pages for r in p] == children

    async def test_replace_is_atomic_with_the_unit(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        original = chunk_set(doc, uid("task"))
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, original)
            await uow.commit()
        with pytest.raises(RuntimeError):
            async with uow_factory() as uow:
                await uow.chunks.replace_document(doc, chunk_set(doc, uid("task"), parents=5))
                raise RuntimeError("crash mid-chunking")
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == original

    async def test_long_cjk_text_survives(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        record = chunk_set(doc, uid("task"), parents=1, per_parent=0)[0]
        text = ("长文本𠀀測試 emoji 🙂 " * 8000)[:120_000]

        record = attrs.evolve(record, text=text, section_path=("第一章", "引言：背景", ""))
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, [record])
            await uow.commit()
        async with uow_factory() as uow:
            (stored,) = await uow.chunks.list_document(doc)
        assert stored.text == text
        assert stored.section_path == ("第一章", "引言：背景", "")

    async def test_get_many_never_crosses_tenants(self, uow_factory: UnitOfWorkFactory) -> None:
        doc_id = uid("doc")
        mine = scope("u-a", "d-a", doc_id)
        other_user = scope("u-b", "d-a", doc_id)
        other_dataset = scope("u-a", "d-b", doc_id)
        sets = {
            s: chunk_set(s, uid("task"), parents=1, per_parent=2)
            for s in (mine, other_user, other_dataset)
        }
        async with uow_factory() as uow:
            for where, records in sets.items():
                await uow.chunks.replace_document(where, records)
            await uow.commit()
        ids = [r.chunk_id for r in sets[mine]]  # the same ids exist in the other tenants
        async with uow_factory() as uow:
            got = await uow.chunks.get_many("u-a", "d-a", [*reversed(ids), uid("missing")])
            assert got == list(reversed(sets[mine]))
            assert await uow.chunks.get_many("u-a", "d-a", []) == []
            assert await uow.chunks.get_many("u-c", "d-a", ids) == []
            other = await uow.chunks.get_many("u-b", "d-a", ids)
            assert other == sets[other_user]
            assert all(r.scope == other_user for r in other)
            # Moves are scoped too: moving "my" ids leaves the other tenants' rows alone.
            assert await uow.chunks.move_dense(mine, ids, BEGIN_INDEXING) == len(
                children(sets[mine])
            )
            await uow.commit()
        async with uow_factory() as uow:
            for where in (other_user, other_dataset):
                for record in await uow.chunks.list_document(where):
                    assert record.dense_status in (None, ChunkIndexStatus.PENDING)

    async def test_chunk_moves_are_compare_and_set(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=1, per_parent=6)
        parent, kids = records[0], children(records)
        ids = [k.chunk_id for k in kids]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            # the parent has no index status: it never moves
            assert await uow.chunks.move_dense(doc, [parent.chunk_id], BEGIN_INDEXING) == 0
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 6
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 0  # now INDEXING
            assert await uow.chunks.move_dense(doc, ids[:2], COMPLETE) == 2
            assert await uow.chunks.move_dense(doc, ids[2:4], FAIL) == 2
            await uow.commit()
        async with uow_factory() as uow:
            by_id = {r.chunk_id: r for r in await uow.chunks.list_document(doc)}
            assert [by_id[i].dense_status for i in ids] == [
                ChunkIndexStatus.SUCCESS,
                ChunkIndexStatus.SUCCESS,
                ChunkIndexStatus.FAILED,
                ChunkIndexStatus.FAILED,
                ChunkIndexStatus.INDEXING,
                ChunkIndexStatus.INDEXING,
            ]
            assert all(by_id[i].sparse_status is ChunkIndexStatus.PENDING for i in ids)
            assert by_id[parent.chunk_id].dense_status is None
            # PENDING|FAILED -> INDEXING takes the two FAILED only; SUCCESS is never re-done.
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 2
            assert await uow.chunks.move_dense(doc, ids[:2], FAIL) == 0
            assert await uow.chunks.move_dense(doc, ids, COMPLETE) == 4
            assert await uow.chunks.move_dense(doc, [*ids, *ids], BEGIN_INDEXING) == 0
            assert await uow.chunks.move_dense(doc, [uid("missing")], BEGIN_INDEXING) == 0
            # sparse is independent of dense
            assert await uow.chunks.move_sparse(doc, ids[:3], BEGIN_INDEXING) == 3
            await uow.commit()
        async with uow_factory() as uow:
            stored = [r for r in await uow.chunks.list_document(doc) if not r.is_parent]
        assert all(r.dense_status is ChunkIndexStatus.SUCCESS for r in stored)
        assert [r.sparse_status for r in stored] == [ChunkIndexStatus.INDEXING] * 3 + [
            ChunkIndexStatus.PENDING
        ] * 3

    async def test_a_big_document_moves_in_one_call(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=30, per_parent=60)
        ids = [r.chunk_id for r in children(records)]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == len(ids) == 1800
            assert len(await uow.chunks.get_many(doc.user_id, doc.dataset_id, ids)) == 1800
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_document(doc) == len(records)

    async def test_delete_a_document_and_count_chunks(self, uow_factory: UnitOfWorkFactory) -> None:
        user = uid("u")
        gone, kept = scope(user), scope(user)
        records = chunk_set(gone, "t1")
        async with uow_factory() as uow:
            await uow.chunks.replace_document(gone, records)
            await uow.chunks.replace_document(kept, chunk_set(kept, "t2", parents=1))
            await uow.commit()
        first_child = children(records)[0].chunk_id
        async with uow_factory() as uow:
            assert await uow.chunks.move_dense(gone, [first_child], BEGIN_INDEXING) == 1
            assert await uow.chunks.move_dense(gone, [first_child], COMPLETE) == 1
            assert await uow.chunks.move_sparse(gone, [first_child], BEGIN_INDEXING) == 1
            await uow.commit()
        async with uow_factory() as uow:
            counts = await uow.chunks.document_counts(
                user, "d1", [gone.doc_id, kept.doc_id, "no-such-doc"]
            )
            assert await uow.chunks.document_counts(uid("u"), "d1", [gone.doc_id]) == {}
        assert counts == {
            gone.doc_id: ChunkCounts(parents=2, children=6, dense_indexed=1, sparse_indexed=0),
            kept.doc_id: ChunkCounts(parents=1, children=3, dense_indexed=0, sparse_indexed=0),
        }
        async with uow_factory() as uow:
            assert await uow.chunks.delete_document(gone) == len(records)
            if not self.serializes_transactions:  # uncommitted: another unit still sees them
                async with uow_factory() as other:
                    assert await other.chunks.count_document(gone) == len(records)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_document(gone) == 0
            assert await uow.chunks.delete_document(gone) == 0  # again: nothing, no error
            assert await uow.chunks.count_document(kept) == 4
            assert await uow.chunks.document_counts(user, "d1", [gone.doc_id]) == {}

    async def test_count_user_vectors_counts_children_past_pending(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("u")
        where = scope(user)
        records = chunk_set(where, "t1")
        ids = [c.chunk_id for c in children(records)]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(where, records)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_user_vectors(user) == 0
            assert await uow.chunks.move_dense(where, ids[:3], BEGIN_INDEXING) == 3
            assert await uow.chunks.move_dense(where, ids[:1], COMPLETE) == 1
            assert await uow.chunks.move_dense(where, ids[1:2], FAIL) == 1
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_user_vectors(user) == 3
            assert await uow.chunks.count_user_vectors(uid("u")) == 0

    async def test_user_children_with_vectors_page_by_id_across_datasets(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("u")
        here, there = scope(user), scope(user, dataset_id="other")
        indexed: list[tuple[str, str]] = []
        async with uow_factory() as uow:
            for where in (here, there, scope(uid("u"))):
                records = chunk_set(where, "t1")
                await uow.chunks.replace_document(where, records)
                ids = [c.chunk_id for c in children(records)]
                assert await uow.chunks.move_dense(where, ids, BEGIN_INDEXING) == len(ids)
                assert await uow.chunks.move_dense(where, ids[:-1], COMPLETE) == len(ids) - 1
                if where.user_id == user:
                    indexed += [(i, where.dataset_id) for i in ids[:-1]]
            await uow.commit()
        indexed.sort()
        async with uow_factory() as uow:
            pages: list[tuple[str, str]] = []
            after = None
            while page := await uow.chunks.list_user_children(user, after=after, limit=2):
                pages += [(c.chunk_id, c.scope.dataset_id) for c in page]
                after = pages[-1]
            assert pages == indexed  # children with a vector only, every dataset, once
            disabled = indexed[0]
            where = here if disabled[1] == here.dataset_id else there
            assert await uow.chunks.set_enabled(where, disabled[0], enabled=False) == 1
            page = await uow.chunks.list_user_children(user, limit=len(indexed))
            assert [(c.chunk_id, c.scope.dataset_id) for c in page] == indexed[1:]
            indexed = indexed[1:]
            first, last = indexed[1][0], indexed[-2][0]
            ranged = await uow.chunks.list_user_children(user, first=first, last=last)
            assert [(c.chunk_id, c.scope.dataset_id) for c in ranged] == [
                x for x in indexed if first <= x[0] <= last
            ]
            assert all(c.text for c in ranged)

    async def test_parents_page_with_their_children(self, uow_factory: UnitOfWorkFactory) -> None:
        doc, neighbour = scope(), scope(doc_id=uid("doc"))
        records = chunk_set(doc, uid("task"), parents=3, per_parent=2)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            await uow.chunks.replace_document(neighbour, chunk_set(neighbour, uid("task")))
            await uow.commit()
        parents = [r for r in records if r.is_parent]
        async with uow_factory() as uow:
            first = await uow.chunks.list_parents(doc, limit=2)
            rest = await uow.chunks.list_parents(doc, after_order_index=first[-1].order_index)
            kids = await uow.chunks.children_of(doc, [p.chunk_id for p in first])
            assert await uow.chunks.children_of(neighbour, [p.chunk_id for p in first]) == []
        assert [*first, *rest] == parents
        assert kids == [r for r in children(records) if r.parent_id in {p.chunk_id for p in first}]

    async def test_enabled_is_a_compare_and_set(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=1, per_parent=3)
        kid = children(records)[1]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.set_enabled(doc, kid.chunk_id, enabled=True) == 0  # already
            assert await uow.chunks.set_enabled(doc, kid.chunk_id, enabled=False) == 1
            assert await uow.chunks.set_enabled(doc, kid.chunk_id, enabled=False) == 0
            other = scope(doc_id=uid("doc"))
            assert await uow.chunks.set_enabled(other, kid.chunk_id, enabled=True) == 0
            await uow.commit()
        async with uow_factory() as uow:
            stored = {r.chunk_id: r for r in await uow.chunks.list_document(doc)}
            # a disabled chunk is listed but never paged for indexing
            indexed = await uow.chunks.list_children(doc)
            assert stored[kid.chunk_id].enabled is False
            assert kid.chunk_id not in {c.chunk_id for c in indexed}
            assert len(indexed) == 2
            assert await uow.chunks.set_enabled(doc, kid.chunk_id, enabled=True) == 1
            await uow.commit()
        async with uow_factory() as uow:
            assert len(await uow.chunks.list_children(doc)) == 3

    async def test_replace_text_is_a_compare_and_set(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=1, per_parent=2)
        parent, kid = records[0], children(records)[0]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            await uow.chunks.move_dense(doc, [kid.chunk_id], BEGIN_INDEXING)
            await uow.chunks.move_dense(doc, [kid.chunk_id], COMPLETE)
            await uow.commit()
        new = "新的文本 edited text"
        async with uow_factory() as uow:
            assert await uow.chunks.replace_text(doc, kid.chunk_id, expected="stale", text=new) == 0
            assert (
                await uow.chunks.replace_text(doc, parent.chunk_id, expected=parent.text, text=new)
                == 0
            )  # a parent is not edited
            assert (
                await uow.chunks.replace_text(doc, kid.chunk_id, expected=kid.text, text=new) == 1
            )
            assert (
                await uow.chunks.replace_text(doc, kid.chunk_id, expected=kid.text, text=new) == 0
            )
            await uow.commit()
        async with uow_factory() as uow:
            (stored,) = await uow.chunks.get_many(doc.user_id, doc.dataset_id, [kid.chunk_id])
        assert (stored.text, stored.edited) == (new, True)
        assert stored.dense_status is stored.sparse_status is ChunkIndexStatus.PENDING
