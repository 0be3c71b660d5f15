"""remembered_pages keeps a document's children for the next stages only when they were one
short page: a large document is never held in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from ragline.application.pipeline.stages.indexing import CHILD_PAGE, remembered_pages


async def _pages(*sizes: int) -> AsyncIterator[list[Any]]:
    for number, size in enumerate(sizes):
        yield [f"chunk-{number}-{i}" for i in range(size)]


async def _drain(*sizes: int) -> tuple[list[list[Any]], Any]:
    ctx = SimpleNamespace(children=["stale"])
    seen = [page async for page in remembered_pages(_pages(*sizes), ctx)]  # type: ignore[arg-type]
    return seen, ctx.children


async def test_one_short_page_is_kept() -> None:
    seen, kept = await _drain(44)
    assert kept == seen[0] and len(kept) == 44


async def test_several_pages_are_passed_through_and_none_is_kept() -> None:
    seen, kept = await _drain(CHILD_PAGE, CHILD_PAGE, 7)
    assert [len(page) for page in seen] == [CHILD_PAGE, CHILD_PAGE, 7]
    assert kept is None


async def test_a_full_first_page_may_have_a_next_one_so_it_is_not_kept() -> None:
    _, kept = await _drain(CHILD_PAGE)
    assert kept is None


async def test_no_children_keeps_nothing() -> None:
    _, kept = await _drain()
    assert kept is None


class _Page(list[Any]):
    """A page that can be weakly referenced."""


async def test_a_page_is_let_go_once_the_next_one_arrives() -> None:
    """Held pages would make memory grow with the document (300k children at 100 MB)."""
    import gc
    import weakref

    async def pages() -> AsyncIterator[list[Any]]:
        for _ in range(3):
            yield _Page(range(CHILD_PAGE))

    ctx = SimpleNamespace(children=None)
    stream = remembered_pages(pages(), ctx)  # type: ignore[arg-type]
    first = weakref.ref(await anext(stream))
    await anext(stream)
    gc.collect()
    assert first() is None
    await stream.aclose()
