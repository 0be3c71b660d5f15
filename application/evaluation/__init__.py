"""`ragline eval`: how well search finds the answers of a gold question set."""

from ragline.application.evaluation.use_case import (
    RANKINGS,
    DegradedEvaluation,
    EvaluateRetrieval,
    EvaluationReport,
    GoldQuestion,
    Miss,
)

__all__ = [
    "RANKINGS",
    "DegradedEvaluation",
    "EvaluateRetrieval",
    "EvaluationReport",
    "GoldQuestion",
    "Miss",
]
