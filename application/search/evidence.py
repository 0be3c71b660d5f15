"""Steps after fusion over hydrated hits (best first): parent-level evidence and dedupe.

Children of one parent share the parent's text, which is what a reader gets with a hit; two
children of one parent in the top k show the same context twice and push another answer out.
Scoring each parent from its children (auto-merging) and keeping its best child gives one
hit per parent; a parent several of whose children were found earns `sibling_bonus` times
their scores on top of its best child's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

import attrs


class _Ranked(Protocol):
    @property
    def chunk_id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def score(self) -> float: ...


H = TypeVar("H", bound=_Ranked)
_SPACE = re.compile(r"\s+")


def by_parent(hits: Sequence[H], sibling_bonus: float = 0.0) -> list[H]:
    """One hit per parent (its best child), ordered by the parent's score.

    A parent's score is its best child's score plus `sibling_bonus` times the sum of its other
    children's; hits without a parent stand alone. Ties keep the input order."""
    groups: dict[str, list[H]] = {}
    for hit in hits:
        groups.setdefault(hit.parent_id or hit.chunk_id, []).append(hit)
    scored: list[tuple[float, int, H]] = []
    for order, members in enumerate(groups.values()):
        best = members[0]
        score = best.score + sibling_bonus * math.fsum(m.score for m in members[1:])
        scored.append((score, order, attrs.evolve(best, score=score)))  # type: ignore[misc]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [hit for _, _, hit in scored]


def dedupe(hits: Sequence[H]) -> list[H]:
    """Drop every hit whose text, whitespace and case aside, a better hit already shows."""
    seen: set[str] = set()
    kept: list[H] = []
    for hit in hits:
        key = _SPACE.sub(" ", hit.text).strip().casefold()
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit)
    return kept
