"""Page ranges are bounded, and the planning and read rules cost what the document holds,
not what a caller asks: issue 18 (`page_range=1-99999999999999999999` allocated per page
before the document was looked at)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.domain.parse_batch import (
    MAX_PAGE,
    BatchStatus,
    PageRange,
    ParseBatch,
    ParseRequest,
    ParseTier,
    coverage,
    known_page_count,
    newest_pages,
    plan,
    split,
)
from tests.domain.test_parse_batch_planning import SHA, batch, known_batches, requests


def test_a_range_past_the_cap_is_refused_when_it_is_read() -> None:
    for text in ("1-99999999999999999999", f"1-{MAX_PAGE + 1}", "9" * 5000, f"{MAX_PAGE + 1}"):
        with pytest.raises(ValueError, match=f"at most.*{MAX_PAGE}|{MAX_PAGE}.*at most"):
            PageRange.parse(text)
    with pytest.raises(ValueError, match="at most"):
        PageRange(1, MAX_PAGE + 1)
    assert PageRange.parse(f"1-{MAX_PAGE}") == PageRange(1, MAX_PAGE)
    assert PageRange.parse(" 0003 - 007 ") == PageRange(3, 7)


def reference_plan(request: ParseRequest, known: list[ParseBatch], per_batch: int) -> Any:
    """The planning rule page by page, as it was written before ranges (the oracle)."""
    mine = [b for b in known if b.sha256 == request.sha256 and b.tier is request.tier]
    wanted = set(request.page_range.pages())
    if not request.force:
        for b in mine:
            if b.status is BatchStatus.DONE:
                wanted -= set(b.page_range.pages())
    reused = []
    for b in sorted((b for b in mine if b.is_active), key=lambda b: b.id):
        covered = wanted & set(b.page_range.pages())
        if covered:
            wanted -= covered
            reused.append(b.id)
    return reused, split(sorted(wanted), per_batch)


@settings(max_examples=300)
@given(requests, known_batches(), st.integers(1, 6))
def test_the_range_rule_plans_exactly_what_the_page_rule_planned(
    request: ParseRequest, known: list[ParseBatch], per_batch: int
) -> None:
    decided = plan(request, known, per_batch)
    reused, created = reference_plan(request, known, per_batch)
    assert [b.id for b in decided.reused] == reused
    assert list(decided.to_create) == created


@pytest.fixture
def enumerated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every page any PageRange.pages() call hands out, counted."""
    counted = [0]
    original = PageRange.pages

    def counting(self: PageRange) -> range:
        counted[0] += len(self)
        return original(self)

    monkeypatch.setattr(PageRange, "pages", counting)
    yield counted


def test_planning_and_reading_visit_the_held_pages_not_the_asked_range(
    enumerated: list[int],
) -> None:
    known = [
        batch(1, 1, 5, BatchStatus.DONE),
        batch(2, 6, 8, BatchStatus.PENDING),
        batch(3, 4, 12, BatchStatus.DONE, done_at=50),
    ]
    held = sum(len(b.page_range) for b in known)
    asked = PageRange(1, MAX_PAGE)
    decided = plan(ParseRequest(SHA, ParseTier.BASIC, asked), known, 10)
    assert decided.to_create[0] == PageRange(13, 22) and len(decided.to_create) == 9999
    chosen = newest_pages(asked, known)
    assert sorted(chosen) == list(range(1, 13))
    found = coverage(asked, known)
    assert found.missing_ranges == [PageRange(13, MAX_PAGE)]
    assert [b.id for b in found.active] == [2]
    assert enumerated[0] <= 3 * held  # the pages of the batches, never the 100,000 asked


def test_the_document_page_count_comes_from_its_batches() -> None:
    assert known_page_count([]) is None
    assert known_page_count([batch(1, 1, 3, BatchStatus.DONE)]) == 3
    counted = [attrs.evolve(batch(1, 1, 2, BatchStatus.DONE), page_count=40)]
    assert known_page_count(counted) == 40
