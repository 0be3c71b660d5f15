"""Re-ranker port: a second, costlier look at the top candidates of one query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class RerankFailed(Exception):
    """The re-ranker gave no usable order; search keeps the fused one."""


class Reranker(Protocol):
    def rerank(self, query: str, passages: Sequence[str]) -> list[int]:
        """The indices of `passages`, most relevant to `query` first (a permutation of
        range(len(passages)); passages it leaves out keep their order after the rest).
        Raises RerankFailed."""
        ...
