"""Fusion: merge ranked lists whose scores are not comparable into one ranking.

Dense cosine, sparse dot products and BM25 live on different scales. Reciprocal-rank fusion
uses only each list's ranks (score = sum of weight / (k + rank)), so no list needs
calibrating; k = 60 is the constant of Cormack et al. (2009) and the default of Qdrant and
Elasticsearch. Weights let the list that carries paraphrases (dense) count for more than the
lexical ones: with equal weights two lexical lists that agree outvote dense (issue 13).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]],
    k: int = RRF_K,
    limit: int | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists (best first), named by retriever, into one (id, score) list.

    `weights` scale each retriever's contributions (missing names weigh 1). Ties are broken
    by the best single rank, then by id, so the output is deterministic. An id repeated
    inside one list counts once, at its best rank.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if weights is not None and any(w < 0 for w in weights.values()):
        raise ValueError("weights must not be negative")
    contributions: dict[str, list[float]] = {}
    best_rank: dict[str, int] = {}
    for name, ranked in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[str] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            contributions.setdefault(item, []).append(weight / (k + rank))
            best_rank[item] = min(best_rank.get(item, rank), rank)
    # fsum: the same score whatever order the retrievers come in.
    scores = {item: math.fsum(parts) for item, parts in contributions.items()}
    fused = sorted(scores.items(), key=lambda pair: (-pair[1], best_rank[pair[0]], pair[0]))
    return fused if limit is None else fused[:limit]


def score_fusion(
    scored: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
    standard: bool = False,
) -> list[tuple[str, float]]:
    """Fuse scored lists (best first) by their min-max normalised scores, weighted.

    Each list's scores are mapped onto [0, 1] over its own candidates (all 1 when they are
    equal), so a retriever that is sure (one score far above the rest: a known-item BM25
    hit) says so, where RRF would see only "rank 1". An item absent from a list gets 0 from
    it. Ties are broken by the best single rank, then by id.

    `standard` uses z-scores instead ((score - mean) / deviation over the list; an absent
    item gets the list's lowest): a top hit far above its list counts for more than the top
    of a flat list, which min-max would both map to 1.
    """
    if weights is not None and any(w < 0 for w in weights.values()):
        raise ValueError("weights must not be negative")
    parts: dict[str, list[float]] = {}
    best_rank: dict[str, int] = {}
    for name, ranked in scored.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        if not ranked:
            continue
        values = [score for _, score in ranked]
        low, high = min(values), max(values)
        mean = math.fsum(values) / len(values)
        spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
        seen: set[str] = set()
        for rank, (item, score) in enumerate(ranked, start=1):
            if item in seen:
                continue
            seen.add(item)
            if standard:
                normalised = 0.0 if spread == 0 else (score - low) / spread
            else:
                normalised = 1.0 if high == low else (score - low) / (high - low)
            parts.setdefault(item, []).append(weight * normalised)
            best_rank[item] = min(best_rank.get(item, rank), rank)
    scores = {item: math.fsum(p) for item, p in parts.items()}
    fused = sorted(scores.items(), key=lambda pair: (-pair[1], best_rank[pair[0]], pair[0]))
    return fused if limit is None else fused[:limit]
