"""child_pages reads a document's children page by page and stops at a short page (no
extra unit of work to find nothing), yet never misses the page after a full one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ragline.application.pipeline.stages.indexing import child_pages
from ragline.testing.kits.persistence import chunk_set, scope
from tests.fakes.unit_of_work import FakeDatabase


@pytest.mark.parametrize(
    ("children", "page_size", "reads"),
    [(6, 4, 2), (6, 6, 2), (6, 3, 3), (5, 10, 1)],
)
async def test_pages_cover_every_child_with_no_trailing_empty_read(
    children: int, page_size: int, reads: int
) -> None:
    db = FakeDatabase()
    where = scope()
    records = chunk_set(where, "t1", parents=1, per_parent=children)
    db.chunks[where] = {r.chunk_id: r for r in records}
    services: Any = SimpleNamespace(uow=db)
    seen = [
        c.chunk_id
        for page in [p async for p in child_pages(services, where, "t1", page_size)]
        for c in page
    ]
    assert seen == [r.chunk_id for r in records if not r.is_parent]
    assert db.units_opened == reads
