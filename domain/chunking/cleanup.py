"""Cleanup rounds: trim texts, drop blanks and duplicates, keep document order.

A duplicate is the same text at the same structure position (canonical path) within one
scope: the parent seeds, the children of one parent, or the final parents. The same text in
another section is kept: its context differs.

Pieces are plain tuples on this hot path (tens of thousands per document): a tuple literal
costs a fraction of a NamedTuple construction.
"""

from __future__ import annotations

import re
from typing import TypeVar

from ragline.domain.chunking.candidate import Anchor, SourceType
from ragline.domain.chunking.separators import CutIndex

# (start, end, source, anchor, index): a range of the Markdown on its way through a pipeline,
# with the cut index over the (seed or parent) text it lies in
Piece = tuple[int, int, SourceType, Anchor, CutIndex]
# (start, end, text, source, anchor): trimmed, non-empty, text == markdown[start:end]
Trimmed = tuple[int, int, str, SourceType, Anchor]

_NON_SPACE = re.compile(r"\S")
_T = TypeVar("_T")


class CleanupTally:
    """What the cleanup rounds dropped (reported with the result)."""

    __slots__ = ("blank", "duplicate_spans", "duplicates")

    def __init__(self) -> None:
        self.blank = 0
        self.duplicates = [0, 0, 0]
        self.duplicate_spans: list[tuple[int, int]] = []


def cleanup(pieces: list[Piece], tally: CleanupTally, round_no: int) -> list[Trimmed]:
    """Round `round_no` (0: parent seeds, 1: children of one parent, 2: final parents).

    Texts are sliced from each piece's own index text (a seed's or parent's compact string is
    much cheaper to slice than a document stored at 4 bytes per character).
    """
    seen: set[tuple[str, str]] = set()
    out: list[Trimmed] = []
    search = _NON_SPACE.search
    for s, e, source, anchor, index in pieces:
        text = index.text
        base = index.base
        s -= base
        e -= base
        if s >= e or text[s].isspace():
            m = search(text, s, e)
            if m is None:
                tally.blank += 1
                continue
            s = m.start()
        while text[e - 1].isspace():  # terminates: text[s] is not a space
            e -= 1
        t = text[s:e]
        s += base
        e += base
        key = (anchor.canonical_path, t)
        if key in seen:
            tally.duplicates[round_no] += 1
            if round_no != 1:
                tally.duplicate_spans.append((s, e))
            continue
        seen.add(key)
        out.append((s, e, t, source, anchor))
    return out


def final_cleanup(
    blocks: list[tuple[Trimmed, _T]], tally: CleanupTally
) -> list[tuple[Trimmed, _T]]:
    """Round 3 over the finished parents (already trimmed): drop repeated (path, text) pairs.

    Defensive: round 1 used the same key, so this only fires if a refinement step produced
    the same parent twice.
    """
    seen: set[tuple[str, str]] = set()
    out: list[tuple[Trimmed, _T]] = []
    for block in blocks:
        parent = block[0]
        key = (parent[4].canonical_path, parent[2])
        if key in seen:
            tally.duplicates[2] += 1
            tally.duplicate_spans.append((parent[0], parent[1]))
            continue
        seen.add(key)
        out.append(block)
    return out
