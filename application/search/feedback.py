"""Pseudo-relevance feedback on the query vector (Rocchio, 1971): a second dense search.

A paraphrase's vector may sit between its answer and the distractors; the first search's
best passages are mostly on topic, so moving the query towards their mean pulls in their
neighbours (the answer among them) and pushes off-topic near-misses down. Only the positive
half of Rocchio is used (no negative set: nothing says which hits were wrong), as in the
dense PRF of Li et al. (2021, "Pseudo Relevance Feedback with Deep Language Models and Dense
Retrievers: Successes and Pitfalls"): q' = q + beta * mean(top-k passage vectors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def rocchio(
    query: Sequence[float], feedback: Sequence[Sequence[float]], weight: float
) -> list[float]:
    """The unit vector along `query + weight * mean(feedback)`; `query` as given when there
    is no feedback or no weight (or the sum vanishes)."""
    if weight < 0:
        raise ValueError("the feedback weight must not be negative")
    if not feedback or weight == 0:
        return list(query)
    if any(len(v) != len(query) for v in feedback):
        raise ValueError("feedback vectors must have the query's dimension")
    count = len(feedback)
    mixed = [q + weight * math.fsum(v[i] for v in feedback) / count for i, q in enumerate(query)]
    norm = math.sqrt(math.fsum(x * x for x in mixed))
    if norm == 0:
        return list(query)
    return [x / norm for x in mixed]
