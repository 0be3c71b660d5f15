"""`ragline eval`: how well search finds the answers of a gold question set."""

from ragline.application.evaluation.use_case import (
    RANKINGS,
    EvaluateRetrieval,
    EvaluationReport,
    GoldQuestion,
    Miss,
)

__all__ = ["RANKINGS", "EvaluateRetrieval", "EvaluationReport", "GoldQuestion", "Miss"]
