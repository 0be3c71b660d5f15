"""Ranking metrics of one question, from the ranks at which its relevant items were found.

A question has `relevant` items (one answer snippet, or a set of doc / chunk ids) and a
ranking; `found` holds, for each relevant item the ranking contains, the 1-based rank of its
first occurrence (later occurrences of the same item earn nothing, so two chunks quoting the
same answer do not count twice). Gains are binary:
  R@k     = |{r in found : r <= k}| / relevant
  MRR@10  = 1 / min(found) when that is <= 10, else 0
  nDCG@10 = DCG / ideal DCG, DCG = sum(1 / log2(r + 1) for r in found if r <= 10),
            ideal DCG = sum(1 / log2(i + 1) for i = 1 .. min(relevant, 10))
Candidate recall at depth d (of one retriever's candidate list) is R@d: whether the answer
is in the pool at all, which bounds what any fusion or re-ranking of that pool can reach.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import attrs

CUTOFFS = (1, 5, 10)
DEPTH = 10  # MRR and nDCG cutoff
POOL_DEPTHS = (40, 100, 200)  # candidate recall depths


@attrs.frozen
class RankingScore:
    """One question's figures (or a mean over questions)."""

    recall: tuple[float, float, float]  # at CUTOFFS
    mrr: float
    ndcg: float

    def recall_at(self, k: int) -> float:
        return self.recall[CUTOFFS.index(k)]


def score_ranking(found: Sequence[int], relevant: int) -> RankingScore:
    """The figures of one question whose relevant items sit at ranks `found` (1-based)."""
    if relevant < 1:
        raise ValueError("a question needs at least one relevant item")
    ranks = sorted(set(found))
    if len(ranks) != len(found) or any(r < 1 for r in ranks) or len(ranks) > relevant:
        raise ValueError("found ranks must be distinct, >= 1 and at most one per relevant item")
    recall = tuple(sum(r <= k for r in ranks) / relevant for k in CUTOFFS)
    first = ranks[0] if ranks else None
    mrr = 1.0 / first if first is not None and first <= DEPTH else 0.0
    dcg = math.fsum(1.0 / math.log2(r + 1) for r in ranks if r <= DEPTH)
    ideal = math.fsum(1.0 / math.log2(i + 1) for i in range(1, min(relevant, DEPTH) + 1))
    return RankingScore((recall[0], recall[1], recall[2]), mrr, dcg / ideal)


def recall_within(found: Sequence[int], relevant: int, depth: int) -> float:
    """R@depth: the share of the relevant items found at rank <= depth."""
    if relevant < 1 or depth < 1:
        raise ValueError("a question needs at least one relevant item, and depth >= 1")
    return sum(r <= depth for r in set(found)) / relevant


def mean_scores(scores: Iterable[RankingScore]) -> RankingScore:
    """The mean of each figure over questions (all zeros for none)."""
    items = list(scores)
    if not items:
        return RankingScore((0.0, 0.0, 0.0), 0.0, 0.0)
    n = len(items)
    recall = tuple(math.fsum(s.recall[i] for s in items) / n for i in range(len(CUTOFFS)))
    return RankingScore(
        (recall[0], recall[1], recall[2]),
        math.fsum(s.mrr for s in items) / n,
        math.fsum(s.ndcg for s in items) / n,
    )
