"""ListChunks and EditChunk on the fake harness: parents with their children paged by cursor,
scoped; an edit finished by its repeat; another tenant changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.documents import (
    ChunkChange,
    ChunkNotFound,
    DocumentNotFound,
    EditChunk,
    ListChunks,
)
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import ChunkIndexStatus
from tests.fakes.harness import Harness


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness


async def test_parents_with_children_paged_by_cursor(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    stored = h.db.chunks_of(h.scope(task))
    parents = [c for c in stored if c.is_parent]
    listing = ListChunks(h.db)
    seen = []
    cursor: str | None = None
    while True:
        page = await listing("7", "3", "100", cursor=cursor, limit=1)
        seen.extend(page.families)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [f.parent.chunk_id for f in seen] == [p.chunk_id for p in parents]
    for family in seen:
        assert family.children
        assert all(c.parent_id == family.parent.chunk_id for c in family.children)
    assert sum(len(f.children) for f in seen) == len(stored) - len(parents)


async def test_another_tenant_or_a_bad_cursor(h: Harness) -> None:
    await h.pipeline.handle(h.task())
    listing = ListChunks(h.db)
    with pytest.raises(DocumentNotFound):
        await listing("8", "3", "100")  # another user: not found
    with pytest.raises(DocumentNotFound):
        await listing("7", "4", "100")  # another dataset
    with pytest.raises(ValueError):
        await listing("7", "3", "100", cursor="-5")
    with pytest.raises(ValueError):
        await listing("7", "3", "100", limit=0)


def _editor(h: Harness) -> EditChunk:
    return EditChunk(h.db, h.vectors, h.keywords, h.embedders, h.sparse, h.tokenizer)


def _child(h: Harness, task: ParseTaskCommand) -> ChunkRecord:
    return next(c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent)


async def test_an_edit_that_fails_midway_is_finished_by_its_repeat(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    kid = _child(h, task)
    edit = _editor(h)
    h.faults.arm("vectors.upsert_dense", ConnectionError("the vector index is down"))
    with pytest.raises(ConnectionError):
        await edit("7", "3", "100", kid.chunk_id, ChunkChange(text="a brand new text"))
    [stored] = [c for c in h.db.chunks_of(h.scope(task)) if c.chunk_id == kid.chunk_id]
    assert stored.text == "a brand new text" and stored.edited  # the row changed first
    assert stored.dense_status is ChunkIndexStatus.FAILED
    done = await edit("7", "3", "100", kid.chunk_id, ChunkChange(text="a brand new text"))
    assert done.dense_status is done.sparse_status is ChunkIndexStatus.SUCCESS
    [doc] = [d for d in h.keywords.of_document("7", "3", "100") if d.chunk_id == kid.chunk_id]
    assert list(doc.tokens) == h.tokenizer.tokenize("a brand new text")


async def test_other_tenants_change_nothing(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    kid = _child(h, task)
    before = h.db.chunks_of(h.scope(task))
    points, entries = dict(h.vectors.points), dict(h.keywords.entries)
    edit = _editor(h)
    for user, dataset in (("8", "3"), ("7", "4")):
        with pytest.raises((DocumentNotFound, ChunkNotFound)):
            await edit(user, dataset, "100", kid.chunk_id, ChunkChange(enabled=False))
        with pytest.raises((DocumentNotFound, ChunkNotFound)):
            await edit(user, dataset, "100", kid.chunk_id, ChunkChange(text="stolen"))
    with pytest.raises(ChunkNotFound):
        await edit("7", "3", "100", "no-such-chunk", ChunkChange(enabled=False))
    assert h.db.chunks_of(h.scope(task)) == before
    assert h.vectors.points == points and h.keywords.entries == entries


async def test_a_disabled_chunk_leaves_every_index_and_a_retry_keeps_it_out(h: Harness) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    kid = _child(h, task)
    off = await _editor(h)("7", "3", "100", kid.chunk_id, ChunkChange(enabled=False))
    assert off.enabled is False
    assert ("7", "3", kid.chunk_id) not in h.vectors.points
    assert ("7", "3", kid.chunk_id) not in h.keywords.entries
    # indexing pages skip it: the stages of a later run that keep the chunk set never index it
    async with h.db() as uow:
        indexed = await uow.chunks.list_children(h.scope(task))
    assert kid.chunk_id not in {c.chunk_id for c in indexed}
