"""The two coordinates of a parse: the tier asked for and the pages it covers."""

from __future__ import annotations

import re
from enum import StrEnum

import attrs

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


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

    @classmethod
    def parse(cls, text: str) -> PageRange:
        """``"3"`` or ``"1-10"``; ValueError with a readable message otherwise."""
        match = _RANGE.match(text)
        if match is None:
            raise ValueError(f"page range {text!r} is not N or N-M")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        return cls(first, last)

    def __len__(self) -> int:
        return self.last - self.first + 1

    def __contains__(self, page: object) -> bool:
        return isinstance(page, int) and self.first <= page <= self.last

    def pages(self) -> range:
        return range(self.first, self.last + 1)

    def __str__(self) -> str:
        return f"{self.first}-{self.last}"
