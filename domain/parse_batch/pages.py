"""The two coordinates of a parse: the tier asked for and the pages it covers.

Page numbers are bounded (`MAX_PAGE`): a range is a request for work, and the rules that
plan and read it work on ranges, never page by page over what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

import attrs

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")

MAX_PAGE = 100_000
"""The highest page ragline plans, stores or reads: no real document has more (a PDF
counted past it is refused), and a range past it is refused before anything is done."""


class ParseTier(StrEnum):
    """How hard a parse tries. A cache entry answers only a request at the same tier."""

    BASIC = "basic"  # the text layer only
    QUALITY = "quality"  # layout-aware, plus OCR for every page without a usable text layer


@attrs.frozen
class PageRange:
    """Pages ``first``..``last``, 1-based and inclusive. A non-paged file is page 1."""

    first: int
    last: int

    def __attrs_post_init__(self) -> None:
        if self.first < 1:
            raise ValueError(f"pages start at 1, not {self.first}")
        if self.last < self.first:
            raise ValueError(f"page range {self.first}-{self.last} ends before it starts")
        if self.last > MAX_PAGE:
            raise ValueError(f"pages end at {MAX_PAGE} at most, not {self.last}")

    @classmethod
    def parse(cls, text: str) -> PageRange:
        """``"3"`` or ``"1-10"``; ValueError with a readable message otherwise."""
        match = _RANGE.match(text)
        if match is None:
            raise ValueError(f"page range {text[:40]!r} is not N or N-M")
        first, last = (_page_number(g) for g in (match.group(1), match.group(2) or match.group(1)))
        return cls(first, last)

    def __len__(self) -> int:
        return self.last - self.first + 1

    def __contains__(self, page: object) -> bool:
        return isinstance(page, int) and self.first <= page <= self.last

    def pages(self) -> range:
        return range(self.first, self.last + 1)

    def overlaps(self, other: PageRange) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlap(self, other: PageRange) -> PageRange | None:
        """The pages both hold, or None."""
        if not self.overlaps(other):
            return None
        return PageRange(max(self.first, other.first), min(self.last, other.last))

    def without(self, other: PageRange) -> list[PageRange]:
        """This range less `other`: zero, one or two ranges, in page order."""
        if not self.overlaps(other):
            return [self]
        left = [PageRange(self.first, other.first - 1)] if self.first < other.first else []
        right = [PageRange(other.last + 1, self.last)] if other.last < self.last else []
        return left + right

    def chunks(self, size: int) -> list[PageRange]:
        """Consecutive ranges of at most `size` pages from the first page on."""
        return [
            PageRange(start, min(start + size - 1, self.last))
            for start in range(self.first, self.last + 1, size)
        ]

    def __str__(self) -> str:
        return f"{self.first}-{self.last}"


def _page_number(digits: str) -> int:
    """A page number as written; past MAX_PAGE says so (without converting a huge string)."""
    page = int(digits) if len(digits.lstrip("0")) <= len(str(MAX_PAGE)) else MAX_PAGE + 1
    if page > MAX_PAGE:
        raise ValueError(f"pages end at {MAX_PAGE} at most, not {digits[:24]}")
    return page


def less(ranges: Iterable[PageRange], removed: PageRange) -> list[PageRange]:
    """Disjoint ranges in page order, less `removed` (still disjoint, in page order)."""
    return [piece for kept in ranges for piece in kept.without(removed)]


def written(ranges: Iterable[PageRange]) -> str:
    """``1-3, 7, 9-12``: ranges as a person reads them."""
    return ", ".join(str(r.first) if r.first == r.last else str(r) for r in ranges)
