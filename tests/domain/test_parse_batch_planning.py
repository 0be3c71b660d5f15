"""The planning and read rules of the parse cache (docs/design/0003-parse-cache.md), as properties
and as the ADR's listed cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.domain.parse_batch import (
    BatchStatus,
    IllegalBatchMove,
    PageRange,
    ParseBatch,
    ParseRequest,
    ParseTier,
    RequestStatus,
    SourceRef,
    coverage,
    newest_pages,
    outcome,
    plan,
    split,
)

SHA = "a" * 64
T0 = datetime(2026, 6, 9, tzinfo=UTC)
SOURCE = SourceRef("parse-cache", f"sources/{SHA}", "pdf")
MAX_PAGE = 24


def batch(
    id: int,
    first: int,
    last: int,
    status: BatchStatus,
    *,
    done_at: float | None = None,
    tier: ParseTier = ParseTier.BASIC,
    sha256: str = SHA,
    priority: int = 0,
) -> ParseBatch:
    done = T0 + timedelta(seconds=done_at if done_at is not None else id)
    return ParseBatch(
        id=id,
        sha256=sha256,
        tier=tier,
        page_range=PageRange(first, last),
        status=status,
        priority=priority,
        created_at=T0,
        source=SOURCE,
        done_at=done if status in (BatchStatus.DONE, BatchStatus.FAILED) else None,
        error_code="PARSE_ENGINE_FAILED" if status is BatchStatus.FAILED else None,
        error_msg="boom" if status is BatchStatus.FAILED else None,
    )


def pages_of(ranges: object) -> list[int]:
    return [p for r in ranges for p in r.pages()]  # type: ignore[attr-defined]


# -- strategies -----------------------------------------------------------------------------

page_ranges = st.builds(
    lambda a, n: PageRange(a, min(MAX_PAGE, a + n)),
    st.integers(1, MAX_PAGE),
    st.integers(0, 8),
)


@st.composite
def known_batches(draw: st.DrawFn) -> list[ParseBatch]:
    count = draw(st.integers(0, 8))
    found = []
    for i in range(1, count + 1):
        r = draw(page_ranges)
        found.append(
            batch(
                i,
                r.first,
                r.last,
                draw(st.sampled_from(list(BatchStatus))),
                done_at=draw(st.integers(0, 100)),
                tier=draw(st.sampled_from([ParseTier.BASIC, ParseTier.BASIC, ParseTier.QUALITY])),
                sha256=draw(st.sampled_from([SHA, SHA, "b" * 64])),
                priority=draw(st.integers(0, 3)),
            )
        )
    return found


requests = st.builds(
    ParseRequest,
    sha256=st.just(SHA),
    tier=st.just(ParseTier.BASIC),
    page_range=page_ranges,
    force=st.booleans(),
    priority=st.integers(0, 5),
)


def relevant(known: list[ParseBatch]) -> list[ParseBatch]:
    return [b for b in known if b.sha256 == SHA and b.tier is ParseTier.BASIC]


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=150)
@given(requests, known_batches(), st.integers(1, 6))
def test_every_requested_page_is_covered_and_created_batches_never_overlap(
    request: ParseRequest, known: list[ParseBatch], per_batch: int
) -> None:
    result = plan(request, known, per_batch)
    created = pages_of(result.to_create)
    # created batches never overlap each other
    assert len(created) == len(set(created))
    assert all(len(r) <= per_batch for r in result.to_create)
    assert set(created) <= set(request.page_range.pages())
    # ... nor an active batch of the same file and tier
    active = {p for b in relevant(known) if b.is_active for p in b.page_range.pages()}
    assert not set(created) & active
    # every page is covered: by done cache (not forced), a reused batch, or a created one
    covered = set(created) | {p for b in result.reused for p in b.page_range.pages()}
    if not request.force:
        covered |= {
            p for b in relevant(known) if b.status is BatchStatus.DONE for p in b.page_range.pages()
        }
    assert set(request.page_range.pages()) <= covered


@settings(max_examples=120)
@given(requests, known_batches(), st.integers(1, 6))
def test_reuse_only_active_batches_of_this_file_and_tier_and_raise_them(
    request: ParseRequest, known: list[ParseBatch], per_batch: int
) -> None:
    result = plan(request, known, per_batch)
    by_id = {b.id: b for b in relevant(known)}
    ids = [b.id for b in result.reused]
    assert len(ids) == len(set(ids))
    for reused in result.reused:
        before = by_id[reused.id]
        assert before.is_active
        assert reused.priority > before.priority and reused.priority >= request.priority
        assert set(reused.page_range.pages()) & set(request.page_range.pages())


@settings(max_examples=120)
@given(requests, known_batches(), st.integers(1, 6))
def test_force_never_reads_the_done_cache_and_never_duplicates_an_active_batch(
    request: ParseRequest, known: list[ParseBatch], per_batch: int
) -> None:
    forced = attrs.evolve(request, force=True)
    without_done = [b for b in known if b.status is not BatchStatus.DONE]
    # the done batches make no difference to a forced plan
    assert plan(forced, known, per_batch) == plan(forced, without_done, per_batch)
    result = plan(forced, known, per_batch)
    assert result.status is not RequestStatus.DONE
    active = {p for b in relevant(known) if b.is_active for p in b.page_range.pages()}
    assert not set(pages_of(result.to_create)) & active


@settings(max_examples=120)
@given(requests, known_batches())
def test_full_done_coverage_without_force_is_done_with_an_empty_wait(
    request: ParseRequest, known: list[ParseBatch]
) -> None:
    unforced = attrs.evolve(request, force=False)
    r = unforced.page_range
    cached = [*known, batch(99, r.first, r.last, BatchStatus.DONE)]
    result = plan(unforced, cached, 3)
    assert result.status is RequestStatus.DONE
    assert result.reused == () and result.to_create == ()


@settings(max_examples=120)
@given(st.lists(st.integers(1, 60), unique=True).map(sorted), st.integers(1, 7))
def test_split_keeps_every_page_once_in_contiguous_bounded_ranges(
    pages: list[int], per_batch: int
) -> None:
    ranges = split(pages, per_batch)
    assert pages_of(ranges) == pages
    assert all(1 <= len(r) <= per_batch for r in ranges)


@settings(max_examples=120)
@given(page_ranges, known_batches())
def test_read_takes_the_newest_done_batch_per_page(
    wanted: PageRange, known: list[ParseBatch]
) -> None:
    chosen = newest_pages(wanted, known)
    for page in wanted.pages():
        done = [b for b in known if b.status is BatchStatus.DONE and page in b.page_range]
        if not done:
            assert page not in chosen
        else:
            best = max(done, key=lambda b: (b.done_at, b.id))
            assert chosen[page] is best


# -- the ADR's listed cases -----------------------------------------------------------------


def test_cache_hit_returns_an_empty_wait_list() -> None:
    known = [batch(1, 1, 5, BatchStatus.DONE), batch(2, 6, 10, BatchStatus.DONE)]
    result = plan(ParseRequest(SHA, ParseTier.BASIC, PageRange(1, 10)), known, 5)
    assert result.status is RequestStatus.DONE
    assert result.reused == () and result.to_create == ()


def test_force_reuses_the_active_batch_and_raises_its_priority() -> None:
    known = [batch(1, 1, 10, BatchStatus.DONE), batch(2, 1, 10, BatchStatus.PARSING, priority=2)]
    request = ParseRequest(SHA, ParseTier.BASIC, PageRange(1, 10), force=True)
    result = plan(request, known, 5)
    assert [b.id for b in result.reused] == [2]
    assert result.reused[0].priority == 3
    assert result.to_create == ()
    assert result.status is RequestStatus.PARSING


def test_partial_reuse_and_creation() -> None:
    known = [batch(12, 1, 5, BatchStatus.PENDING)]
    result = plan(ParseRequest(SHA, ParseTier.BASIC, PageRange(1, 10)), known, 5)
    assert [b.id for b in result.reused] == [12]
    assert result.to_create == (PageRange(6, 10),)
    assert result.status is RequestStatus.PENDING


def test_a_large_document_splits_into_bounded_batches() -> None:
    result = plan(ParseRequest(SHA, ParseTier.BASIC, PageRange(1, 23)), [], 10)
    assert result.to_create == (PageRange(1, 10), PageRange(11, 20), PageRange(21, 23))


def test_other_tiers_and_files_are_another_cache() -> None:
    known = [
        batch(1, 1, 3, BatchStatus.DONE, tier=ParseTier.QUALITY),
        batch(2, 1, 3, BatchStatus.DONE, sha256="b" * 64),
    ]
    result = plan(ParseRequest(SHA, ParseTier.BASIC, PageRange(1, 3)), known, 5)
    assert result.to_create == (PageRange(1, 3),)


def test_a_failed_force_batch_fails_the_request_despite_older_cache() -> None:
    old = batch(1, 1, 10, BatchStatus.DONE)
    forced = batch(2, 1, 10, BatchStatus.FAILED)
    result = outcome([forced])
    assert result.status is RequestStatus.FAILED
    assert "may still be readable" in result.message and "batch 2" in result.message
    # the old pages are still what a read returns: the cache is another question
    assert newest_pages(PageRange(1, 10), [old, forced])[1] is old


def test_latest_page_read_mixes_batches_by_done_at() -> None:
    old = batch(1, 1, 10, BatchStatus.DONE, done_at=10)
    newer = batch(2, 4, 6, BatchStatus.DONE, done_at=20)
    chosen = newest_pages(PageRange(1, 10), [newer, old])
    assert [chosen[p].id for p in range(1, 11)] == [1, 1, 1, 2, 2, 2, 1, 1, 1, 1]


def test_outcome_waits_for_every_batch() -> None:
    assert outcome([]).status is RequestStatus.DONE
    running = outcome([batch(1, 1, 2, BatchStatus.DONE), batch(2, 3, 4, BatchStatus.PARSING)])
    assert running.status is RequestStatus.PARSING
    assert [b.id for b in running.unfinished] == [2]


def test_coverage_reports_missing_pages_and_active_batches() -> None:
    known = [batch(1, 1, 3, BatchStatus.DONE), batch(2, 4, 5, BatchStatus.PENDING)]
    found = coverage(PageRange(1, 6), known)
    assert found.missing == [4, 5, 6]
    assert [b.id for b in found.active] == [2]
    assert found.status is RequestStatus.PENDING
    assert coverage(PageRange(1, 3), known).status is RequestStatus.DONE


# -- moves ----------------------------------------------------------------------------------


def test_claim_finish_and_a_dead_workers_lease_is_taken_over() -> None:
    pending = batch(1, 1, 2, BatchStatus.PENDING)
    lease = timedelta(seconds=30)
    claimed = pending.claim("w1", T0, lease)
    assert claimed.status is BatchStatus.PARSING and claimed.owner == "w1" and claimed.claims == 1
    assert not claimed.claimable(T0 + timedelta(seconds=29))
    with pytest.raises(IllegalBatchMove):
        claimed.claim("w2", T0 + timedelta(seconds=29), lease)
    taken = claimed.claim("w2", T0 + timedelta(seconds=30), lease)
    assert taken.owner == "w2" and taken.claims == 2
    done = taken.finish(T0 + timedelta(seconds=31), "naive")
    assert done.status is BatchStatus.DONE and done.backend == "naive" and done.lease_until is None
    for move in (
        lambda: done.finish(T0, "x"),
        lambda: done.fail("X", "y", T0),
        lambda: done.raised_to(9),
        lambda: pending.finish(T0, "x"),
    ):
        with pytest.raises(IllegalBatchMove):
            move()
    failed = batch(2, 1, 1, BatchStatus.PENDING).claim("w", T0, lease).fail("C", "m" * 5000, T0)
    assert failed.status is BatchStatus.FAILED and len(failed.error_msg or "") == 2000
