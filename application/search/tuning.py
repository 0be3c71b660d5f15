"""How hybrid search orders its candidates: fusion weights and the steps after fusion.

Defaults are the figures tuned on the development sets (docs/retrieval.md); settings may
override them. Every step is deterministic and needs no model or network, except the
optional re-ranker, which is off unless configured.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

RETRIEVERS = ("dense", "sparse", "bm25")
FUSIONS = ("rrf", "score", "zscore")


def _default_weights() -> dict[str, float]:
    return {"dense": 1.0, "sparse": 0.5, "bm25": 0.5}


@attrs.frozen
class SearchTuning:
    candidates_per_retriever: int = 4
    """Each retriever returns this many times top_k candidates before fusion."""
    dense_candidates: int = 0
    """Dense's own pool, as a multiple of top_k (0: candidates_per_retriever). Its exact scan
    costs the same at any depth, and at ~30k children the answer is often below 40."""
    dense_feedback: int = 0
    """Rocchio feedback: mix the mean of the top this-many dense hits' passage vectors into
    the query vector and search dense again (0: off)."""
    feedback_weight: float = 0.5
    """With dense_feedback: the weight of the feedback mean against the query's 1."""
    weights: Mapping[str, float] = attrs.field(factory=_default_weights)
    """Weight of each retriever's reciprocal-rank contributions."""
    rrf_k: int = 60
    fusion: str = "zscore"
    """"rrf" (ranks only), "score" (min-max normalised scores) or "zscore" (standardised)."""
    parent_evidence: bool = True
    """Score each parent from all its children found, return its best child (one per parent)."""
    sibling_bonus: float = 0.2
    """With parent_evidence: a parent's score is its best child's plus this times the others'."""
    dedupe: bool = False
    """Drop a hit whose text (whitespace and case aside) another, better hit already shows."""
    rerank_depth: int = 0
    """With a re-ranker configured: how many of the top candidates it re-orders."""
    retriever_timeout: float = 10.0
    """Seconds one retriever's index may take; past it the answer leaves it out (degraded)."""

    def __attrs_post_init__(self) -> None:
        if self.candidates_per_retriever < 1 or self.rrf_k < 1 or self.rerank_depth < 0:
            raise ValueError("candidates_per_retriever and rrf_k must be >= 1, rerank_depth >= 0")
        if self.dense_candidates < 0 or self.dense_feedback < 0 or self.feedback_weight < 0:
            raise ValueError("dense_candidates, dense_feedback and feedback_weight must be >= 0")
        if not self.retriever_timeout > 0:
            raise ValueError("retriever_timeout must be > 0 seconds")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion is one of {FUSIONS}")
        if set(self.weights) - set(RETRIEVERS) or any(w < 0 for w in self.weights.values()):
            raise ValueError(f"weights are non-negative numbers for {RETRIEVERS}")

    def pool(self, retriever: str, top_k: int) -> int:
        """How many candidates `retriever` returns for a search of `top_k` hits."""
        if retriever == "dense" and self.dense_candidates:
            return top_k * self.dense_candidates
        return top_k * self.candidates_per_retriever
