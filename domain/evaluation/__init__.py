"""Retrieval evaluation: when a hit answers a question, and how a ranking scores."""

from ragline.domain.evaluation.metrics import (
    CUTOFFS,
    POOL_DEPTHS,
    RankingScore,
    mean_scores,
    recall_within,
    score_ranking,
)
from ragline.domain.evaluation.relevance import contains_snippet, normalise_whitespace

__all__ = [
    "CUTOFFS",
    "POOL_DEPTHS",
    "RankingScore",
    "contains_snippet",
    "mean_scores",
    "normalise_whitespace",
    "recall_within",
    "score_ranking",
]
