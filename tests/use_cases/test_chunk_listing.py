"""ListChunks on the fake harness: parents with their children, paged by cursor, scoped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.documents import DocumentNotFound, ListChunks
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
