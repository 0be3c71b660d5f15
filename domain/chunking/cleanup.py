"""Cleanup rounds: trim texts, drop blanks and duplicates, keep document order.

A duplicate is the same text at the same structure position (canonical path) within one
scope: the parents of a document (round 1; round 3 over the final parents is implied, see
the engine) or the children of one parent (round 2). The same text in another section is
kept: its context differs.

Pieces are plain tuples on this hot path (tens of thousands per document): a tuple literal
costs a fraction of a NamedTuple construction.
"""

from __future__ import annotations

import re

from ragline.domain.chunking.candidate import Anchor, ChunkCandidate, SourceType
from ragline.domain.chunking.separators import CutIndex

# (start, end, source, anchor, index): a range of the Markdown on its way through a pipeline,
# with the cut index over the (seed or parent) text it lies in
Piece = tuple[int, int, SourceType, Anchor, CutIndex]
# (start, end, text, source, anchor): trimmed, non-empty, text == markdown[start:end]
Trimmed = tuple[int, int, str, SourceType, Anchor]

_NON_SPACE = re.compile(r"\S")


class CleanupTally:
    """What the cleanup rounds dropped (reported with the result)."""

    __slots__ = ("blank", "duplicate_spans", "duplicates")

    def __init__(self) -> None:
        self.blank = 0
        self.duplicates = [0, 0, 0]
        self.duplicate_spans: list[tuple[int, int]] = []


# a scope's keys: (canonical path, length) -> texts already kept; comparing lengths first
# means most pieces never need hashing
Seen = dict[tuple[str, int], list[str]]


def cleanup(
    pieces: list[Piece], tally: CleanupTally, round_no: int, seen: Seen | None = None
) -> list[Trimmed]:
    """Round 1 (`round_no` 0, parent seeds): trimmed texts, blanks and duplicates dropped.

    Texts are sliced from each piece's own index text (a seed's compact string is much
    cheaper to slice than a document stored at 4 bytes per character). `seen` carries the
    scope's keys when a scope is cleaned in several batches (parent seeds, seed by seed).
    """
    if seen is None:
        seen = {}
    out: list[Trimmed] = []
    for s, e, source, anchor, index in pieces:
        kept = clean_range(index.text, index.base, s, e, source, anchor, seen, tally, round_no)
        if kept is not None:
            out.append(kept)
    return out


def clean_range(
    text: str,
    base: int,
    s: int,
    e: int,
    source: SourceType,
    anchor: Anchor,
    seen: Seen | None,
    tally: CleanupTally,
    round_no: int = 0,
) -> Trimmed | None:
    """One range [s, e) of `text` (which starts at `base`) through `cleanup`'s rules: the
    trimmed piece, or None when it is blank or a duplicate in `seen`'s scope (tallied).
    `seen` None: no other piece of the scope has `anchor`'s canonical path (nothing to check)."""
    raw = text[s - base : e - base]
    t = raw.strip()  # one slice and at most one copy (the text is kept)
    if not t:
        tally.blank += 1
        return None
    if len(t) != len(raw):
        if raw[0].isspace():
            s += len(raw) - len(raw.lstrip())
        e = s + len(t)
    if seen is None:
        return (s, e, t, source, anchor)
    key = (anchor.canonical_path, len(t))
    kept = seen.get(key)
    if kept is None:
        seen[key] = [t]
    elif t in kept:
        tally.duplicates[round_no] += 1
        tally.duplicate_spans.append((s, e))
        return None
    else:
        kept.append(t)
    return (s, e, t, source, anchor)


def cleanup_children(pieces: list[Piece], tally: CleanupTally) -> list[Piece]:
    """Round 2, within one parent: the same rules, without copying the children's texts
    (they stay views on the parent's text; only pieces of equal length are compared)."""
    seen: dict[tuple[str, int], list[tuple[str, int, int]]] = {}
    out: list[Piece] = []
    search = _NON_SPACE.search
    for s, e, source, anchor, index in pieces:
        text = index.text
        base = index.base
        a, b = s - base, e - base
        if a >= b or text[a].isspace():  # (_trim, inlined: this loop sees every child)
            m = search(text, a, b)
            if m is None:
                tally.blank += 1
                continue
            a = m.start()
        if text[b - 1].isspace():
            b = a + len(text[a:b].rstrip())
        key = (anchor.canonical_path, b - a)
        kept = seen.get(key)
        if kept is None:
            seen[key] = [(text, a, b)]
        elif any(t2[a2:b2] == text[a:b] for t2, a2, b2 in kept):
            tally.duplicates[1] += 1
            continue
        else:
            kept.append((text, a, b))
        out.append((a + base, b + base, source, anchor, index))
    return out


def trimmed_children(
    text: str,
    base: int,
    spans: list[tuple[int, int]],
    source: SourceType,
    anchor: Anchor,
    tally: CleanupTally,
) -> tuple[ChunkCandidate, ...]:
    """Round 2 for children cut from one parent's `text` (at `base`) with the parent's anchor:
    the rules of `cleanup_children`, applied while the candidates are built (one pass, no
    piece tuples). They share one canonical path, so duplicates are keyed by length alone."""
    section_path, node_id, node_type, path = anchor
    new = tuple.__new__
    search = _NON_SPACE.search
    # length -> start of the first text kept with it: a child of a new length (nearly all)
    # costs one dict call and no list; a repeated length compares texts (`_repeats`)
    first: dict[int, int] = {}
    more: dict[int, list[int]] = {}
    out: list[ChunkCandidate] = []
    append = out.append
    for s, e in spans:  # document offsets; text[s - base] is the character at s
        if s >= e or text[s - base].isspace():
            m = search(text, s - base, e - base)
            if m is None:
                tally.blank += 1
                continue
            s = m.start() + base
        if text[e - base - 1].isspace():
            e = s + len(text[s - base : e - base].rstrip())
        k = first.setdefault(e - s, s)
        if k != s and _repeats(text, base, s, e, k, more):
            tally.duplicates[1] += 1
            continue
        fields = (section_path, node_id, node_type, path, len(out), source, s, e, text, base)
        append(new(ChunkCandidate, fields))
    return tuple(out)


def _repeats(text: str, base: int, s: int, e: int, k: int, more: dict[int, list[int]]) -> bool:
    """Whether text[s:e] (document offsets) repeats a kept text of its length, the first
    starting at `k`, later ones listed in `more`; when it does not, it is listed as kept."""
    n = e - s
    piece = text[s - base : e - base]
    later = more.setdefault(n, [])
    if any(text[x - base : x - base + n] == piece for x in (k, *later)):
        return True
    later.append(s)
    return False
