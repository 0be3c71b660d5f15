"""LLM: a model proposes where chunks start; the proposal is checked against the text.

A proposal is a list of character offsets or of verbatim snippets that begin each new chunk,
in document order. Any offset out of range or out of order, or any snippet that is not found
(after the previous one), rejects the whole proposal: the model can choose where to cut but
can never invent or alter text.
"""

from __future__ import annotations

from collections.abc import Sequence

Span = tuple[int, int]


def align_proposal(text: str, proposal: Sequence[int | str]) -> list[int] | None:
    """Cut offsets inside (0, len(text)) for `proposal`, or None if it does not align.

    A boundary at the very start is ignored (models like to repeat the first chunk's opening).
    """
    start, end = 0, len(text)
    cuts: list[int] = []
    cursor = start
    for item in proposal:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            pos = start + item
            if not start <= pos < end or pos < cursor:
                return None
        elif isinstance(item, str):
            snippet = item.strip()
            if not snippet:
                return None
            pos = text.find(snippet, cursor, end)
            if pos < 0:
                return None
        else:
            return None
        if pos > start and (not cuts or pos > cuts[-1]):
            cuts.append(pos)
        cursor = max(cursor, pos)
    return cuts


def spans_from_cuts(start: int, end: int, cuts: Sequence[int]) -> list[Span]:
    bounds = [start, *cuts, end]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
