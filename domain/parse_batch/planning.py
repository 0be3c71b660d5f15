"""The planning rule of a parse request (docs/design/0003-parse-cache.md) and the read rule of the
cache.

Planning: given what is already known about (sha256, tier) — done batches and active
(pending/parsing) batches — decide which batches a request waits on:

1. not forced and every requested page is covered by a done batch -> status done, wait on
   nothing;
2. ``force`` ignores the done cache, never the active batches;
3. a page an active batch covers gets no new batch: that batch is reused (its priority rises);
4. every page left gets a new batch (contiguous runs, at most ``pages_per_batch`` each);
5. wait = reused + created.

Reading: per page, the newest done batch by ``done_at`` (then the higher id). A request's own
outcome is decided by its wait batches only: one failed batch fails the request even when
older done pages exist (they may still be read, but this request did not succeed).

Both rules work on page ranges, never page by page over the range asked: their work grows
with the batches known and the pages they hold, whatever range a caller names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum

import attrs

from ragline.domain.parse_batch.batch import BatchStatus, ParseBatch
from ragline.domain.parse_batch.pages import PageRange, ParseTier, less


@attrs.frozen
class ParseRequest:
    sha256: str
    tier: ParseTier
    page_range: PageRange
    force: bool = False
    priority: int = 0


class RequestStatus(StrEnum):
    PENDING = "pending"
    PARSING = "parsing"
    DONE = "done"
    FAILED = "failed"


@attrs.frozen
class ParsePlan:
    """What to persist for a request: priorities to raise, page ranges to create."""

    request: ParseRequest
    reused: tuple[ParseBatch, ...]  # each with its raised priority
    to_create: tuple[PageRange, ...]

    @property
    def status(self) -> RequestStatus:
        if not self.reused and not self.to_create:
            return RequestStatus.DONE
        if any(b.status is BatchStatus.PARSING for b in self.reused):
            return RequestStatus.PARSING
        return RequestStatus.PENDING


def reused_priority(batch: ParseBatch, request: ParseRequest) -> int:
    """A reused batch rises by one, and at least to the request's priority."""
    return max(batch.priority + 1, request.priority)


def plan(request: ParseRequest, known: Iterable[ParseBatch], pages_per_batch: int) -> ParsePlan:
    """The planning rule. `known`: batches of the request's (sha256, tier) in any status."""
    if pages_per_batch < 1:
        raise ValueError("pages_per_batch must be at least 1")
    mine = [b for b in known if b.sha256 == request.sha256 and b.tier is request.tier]
    wanted = [request.page_range]  # disjoint, in page order
    if not request.force:
        for batch in mine:
            if batch.status is BatchStatus.DONE:
                wanted = less(wanted, batch.page_range)
    reused: list[ParseBatch] = []
    for batch in sorted((b for b in mine if b.is_active), key=lambda b: b.id):
        if any(r.overlaps(batch.page_range) for r in wanted):
            wanted = less(wanted, batch.page_range)
            reused.append(batch.raised_to(reused_priority(batch, request)))
    created = tuple(piece for r in wanted for piece in r.chunks(pages_per_batch))
    return ParsePlan(request, tuple(reused), created)


def split(pages: Sequence[int], pages_per_batch: int) -> list[PageRange]:
    """Sorted distinct pages -> contiguous ranges of at most `pages_per_batch` pages."""
    ranges: list[PageRange] = []
    start = previous = None
    for page in pages:
        if start is None or previous is None:
            start = previous = page
        elif page == previous + 1 and page - start < pages_per_batch:
            previous = page
        else:
            ranges.append(PageRange(start, previous))
            start = previous = page
    if start is not None and previous is not None:
        ranges.append(PageRange(start, previous))
    return ranges


# -- reading ------------------------------------------------------------------------------


def newest_pages(page_range: PageRange, known: Iterable[ParseBatch]) -> dict[int, ParseBatch]:
    """Per requested page, the done batch whose content is read: newest done_at, then id.
    A page no done batch covers is absent. Only the pages done batches hold in the range
    are visited."""
    chosen: dict[int, tuple[datetime, int, ParseBatch]] = {}
    for batch in known:
        if batch.status is not BatchStatus.DONE or batch.done_at is None:
            continue
        held = batch.page_range.overlap(page_range)
        if held is None:
            continue
        rank = (batch.done_at, batch.id, batch)
        for page in held.pages():
            best = chosen.get(page)
            if best is None or rank[:2] > best[:2]:
                chosen[page] = rank
    return {page: rank[2] for page, rank in sorted(chosen.items())}


def missing_ranges(page_range: PageRange, chosen: dict[int, ParseBatch]) -> list[PageRange]:
    """The pages of the range `chosen` does not hold, as ranges (visits the chosen pages
    only)."""
    missing: list[PageRange] = []
    start = page_range.first
    for page in sorted(p for p in chosen if p in page_range):
        if page > start:
            missing.append(PageRange(start, page - 1))
        start = page + 1
    if start <= page_range.last:
        missing.append(PageRange(start, page_range.last))
    return missing


def missing_pages(page_range: PageRange, chosen: dict[int, ParseBatch]) -> list[int]:
    return [page for r in missing_ranges(page_range, chosen) for page in r.pages()]


@attrs.frozen
class RequestOutcome:
    """How the batches a request waits on stand."""

    status: RequestStatus
    failed: tuple[ParseBatch, ...] = ()
    unfinished: tuple[ParseBatch, ...] = ()

    @property
    def message(self) -> str:
        if self.status is RequestStatus.FAILED:
            parts = [
                f"batch {b.id} (pages {b.page_range}) failed: {b.error_code}: {b.error_msg}"
                for b in self.failed
            ]
            return (
                "; ".join(parts)
                + ". This request did not succeed; pages parsed earlier may still be readable"
                " from the cache, but they are not the result of this request."
            )
        if self.unfinished:
            return "unfinished: " + ", ".join(f"{b.id} {b.status}" for b in self.unfinished)
        return str(self.status)


def outcome(waited: Sequence[ParseBatch]) -> RequestOutcome:
    """Failed if any waited batch failed; done when all are done; else still running."""
    failed = tuple(b for b in waited if b.status is BatchStatus.FAILED)
    unfinished = tuple(b for b in waited if b.is_active)
    if failed:
        return RequestOutcome(RequestStatus.FAILED, failed, unfinished)
    if unfinished:
        parsing = any(b.status is BatchStatus.PARSING for b in unfinished)
        status = RequestStatus.PARSING if parsing else RequestStatus.PENDING
        return RequestOutcome(status, (), unfinished)
    return RequestOutcome(RequestStatus.DONE)


@attrs.frozen
class Coverage:
    """What the cache holds for (sha256, tier) over a page range: the page -> batch read,
    and the active batches that will fill the rest."""

    page_range: PageRange
    done: dict[int, ParseBatch]
    active: tuple[ParseBatch, ...]

    @property
    def missing_ranges(self) -> list[PageRange]:
        return missing_ranges(self.page_range, self.done)

    @property
    def missing(self) -> list[int]:
        """Page by page: as many as the range has pages no done batch holds."""
        return missing_pages(self.page_range, self.done)

    @property
    def status(self) -> RequestStatus:
        if not self.missing_ranges:
            return RequestStatus.DONE
        if any(b.status is BatchStatus.PARSING for b in self.active):
            return RequestStatus.PARSING
        return RequestStatus.PENDING


def known_page_count(known: Iterable[ParseBatch]) -> int | None:
    """The document's pages as its batches know them: the count recorded when they were
    planned, else the highest page any batch covers; None without batches."""
    batches = list(known)
    counted = [b.page_count for b in batches if b.page_count is not None]
    if counted:
        return max(counted)
    return max((b.page_range.last for b in batches), default=None)


def coverage(page_range: PageRange, known: Iterable[ParseBatch]) -> Coverage:
    batches = list(known)
    done = newest_pages(page_range, batches)
    active = tuple(
        b
        for b in sorted(batches, key=lambda b: b.id)
        if b.is_active and b.page_range.overlaps(page_range)
    )
    return Coverage(page_range, done, active)
