"""Sparse encoder port: text to term-weight vectors for the sparse index (SPARSE_VECTORIZING)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs


@attrs.frozen
class SparseVector:
    """A sparse vector: parallel lists of unique term ids (uint32) and their weights.

    Indices are unique and sorted ascending; values are the weights for those indices.
    """

    indices: list[int] = attrs.field(factory=list)
    values: list[float] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("indices and values must have the same length")

    def is_empty(self) -> bool:
        return not self.indices


class SparseEncoder(Protocol):
    """Encodes documents and queries into the same term space (CPU-bound, sync)."""

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """One vector per text, in order; an empty text gives an empty vector."""
        ...

    def encode_token_lists(self, token_lists: Sequence[Sequence[str]]) -> list[SparseVector]:
        """`encode_documents` for texts the pipeline's Tokenizer has already split (the
        keyword plan's tokens), so a run tokenizes each child once."""
        ...

    def encode_query(self, text: str) -> SparseVector:
        """Query vector: unique query terms, weight 1 each (IDF is applied by the index)."""
        ...
