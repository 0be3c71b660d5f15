"""Retrieval evaluation: when a hit answers a question, and how a ranking scores."""

from ragline.domain.evaluation.metrics import CUTOFFS, RankingScore, mean_scores, score_ranking
from ragline.domain.evaluation.relevance import contains_snippet, normalise_whitespace

__all__ = [
    "CUTOFFS",
    "RankingScore",
    "contains_snippet",
    "mean_scores",
    "normalise_whitespace",
    "score_ranking",
]
