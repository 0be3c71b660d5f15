"""What the SEMANTIC and LLM strategies need from a model, as small protocols.

The application wires them to its Embedder and LLM ports; the domain never calls out itself.
Model output can only choose where to cut: chunks are always slices of the given text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from ragline.domain.chunking.sizing import TokenCounter, WhitespaceCjkTokenCounter


class SentenceEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, in order; called with batches of sentences."""
        ...


class BoundaryProposer(Protocol):
    def propose(self, text: str) -> Sequence[int | str]:
        """Where to start new chunks inside `text`: character offsets, or verbatim snippets
        that begin each new chunk, in order. Anything that does not align is rejected."""
        ...


@attrs.frozen
class ChunkModels:
    """Optional models for the strategies that need one; a missing model means the step
    falls back to RECURSIVE."""

    embedder: SentenceEmbedder | None = None
    proposer: BoundaryProposer | None = None
    token_counter: TokenCounter = attrs.field(factory=WhitespaceCjkTokenCounter)
