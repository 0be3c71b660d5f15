"""The separator hierarchy and a per-document index of cut positions.

A cut position is an offset where a new piece may start. Coarse levels (headings, blank
lines) are indexed once for the whole document and looked up by bisection; finer levels are
scanned only inside the ranges that need them. Nothing is copied: all work is on offsets.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right


class Level:
    """Separator levels, coarse to fine (plain ints: the splitter recurses level + 1 often)."""

    HEADING = 0
    BLANK_LINE = 1
    LINE = 2
    SENTENCE = 3
    CLAUSE = 4
    SPACE = 5
    CHARACTER = 6


_PATTERNS: dict[int, re.Pattern[str]] = {
    # cut before a heading line
    Level.HEADING: re.compile(r"\n(?=#{1,6}[ \t])"),
    # cut after a run of blank lines
    Level.BLANK_LINE: re.compile(r"\n[ \t]*\n\s*"),
    Level.LINE: re.compile(r"\n\s*"),
    # Latin sentence ends need following space; Chinese ones stand alone. Each pattern opens
    # with a character class so the regex engine can skip ahead to candidates quickly.
    Level.SENTENCE: re.compile(
        r"[.!?。！？；…][.!?。！？；…\"')\]”’」』）]*(?:\s+|(?<=[。！？；…」』）”’])\s*)"
    ),
    Level.CLAUSE: re.compile(r"[,;:，、：；](?:\s+|(?<=[，、：；])\s*)"),
    Level.SPACE: re.compile(r"\s+"),
}
_GLOBAL = (Level.HEADING, Level.BLANK_LINE)


class CutIndex:
    """Cut positions, by separator level, over `text` = markdown[base : base + len(text)].

    Offsets in and out are document offsets. The engine gives each section seed and each
    parent its own index over its own (compact) text: scanning and slicing a short string is
    far cheaper than scanning the document, which may be stored at 4 bytes per character.
    """

    __slots__ = ("_global", "base", "text")

    def __init__(self, text: str, base: int = 0, heading_starts: list[int] | None = None) -> None:
        """`heading_starts`: the sorted heading offsets when a structure tree already knows
        them (more exact than the regex: headings inside fenced code are not cuts)."""
        self.text = text
        self.base = base
        self._global: dict[int, list[int]] = {}
        if heading_starts is not None:
            self._global[Level.HEADING] = heading_starts

    def without_headings(self) -> bool:
        """True when the text is known to hold no heading cut (a section seed or parent)."""
        return self._global.get(Level.HEADING) == []

    def slice(self, start: int, end: int) -> str:
        return self.text[start - self.base : end - self.base]

    def cuts(self, level: int, start: int, end: int) -> tuple[list[int], int, int]:
        """(positions, lo, hi): positions[lo:hi] are the cuts strictly inside (start, end)."""
        base = self.base
        if level in _GLOBAL:
            arr = self._global.get(level)
            if arr is None:
                arr = self._global[level] = [
                    m.end() + base for m in _PATTERNS[level].finditer(self.text)
                ]
            return arr, bisect_right(arr, start), bisect_left(arr, end)
        local = [
            m.end() + base for m in _PATTERNS[level].finditer(self.text, start - base, end - base)
        ]
        lo = 0
        while lo < len(local) and local[lo] <= start:
            lo += 1
        hi = len(local)
        while hi > lo and local[hi - 1] >= end:
            hi -= 1
        return local, lo, hi

    def last_cut(self, level: int, lo: int, hi: int) -> int:
        """The largest cut position c with lo < c <= hi, or -1. Searches backwards from `hi`
        in C (str.rfind) for the line-based levels: no list of every cut is built."""
        base = self.base
        text = self.text
        if level == Level.BLANK_LINE:
            p = text.rfind("\n\n", max(lo - base - 1, 0), hi - base)
            return -1 if p < 0 else p + 2 + base
        if level == Level.LINE or level == Level.SPACE:
            p = text.rfind("\n" if level == Level.LINE else " ", lo - base, hi - base)
            return -1 if p < 0 else p + 1 + base
        if level == Level.HEADING:
            arr = self._headings()
            i = bisect_right(arr, hi) - 1
            return arr[i] if i >= 0 and arr[i] > lo else -1
        best = -1
        for m in _PATTERNS[level].finditer(text, lo - base, hi - base):
            best = m.end()
        return best + base if best > lo - base else -1

    def first_cut(self, level: int, lo: int, hi: int) -> int:
        """The smallest cut position c with lo < c < hi, or -1."""
        base = self.base
        text = self.text
        if level == Level.BLANK_LINE:
            p = text.find("\n\n", max(lo - base - 1, 0), hi - base - 1)
            return -1 if p < 0 else p + 2 + base
        if level == Level.LINE or level == Level.SPACE:
            p = text.find("\n" if level == Level.LINE else " ", lo - base, hi - base - 1)
            return -1 if p < 0 else p + 1 + base
        if level == Level.HEADING:
            arr = self._headings()
            i = bisect_right(arr, lo)
            return arr[i] if i < len(arr) and arr[i] < hi else -1
        for m in _PATTERNS[level].finditer(text, lo - base, hi - base):
            c = m.end() + base
            if lo < c < hi:
                return c
            if c >= hi:
                break
        return -1

    def _headings(self) -> list[int]:
        arr = self._global.get(Level.HEADING)
        if arr is None:
            arr, _, _ = self.cuts(Level.HEADING, 0, 0)
        return arr

    def sentence_spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """Consecutive sentence ranges covering [start, end)."""
        arr, lo, hi = self.cuts(Level.SENTENCE, start, end)
        bounds = [start, *arr[lo:hi], end]
        return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
