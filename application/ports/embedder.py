"""Dense embedder port: texts to normalised vectors (VECTORIZING, SEMANTIC chunking, search).

The shape is synchronous on purpose: embedding is CPU-bound (or, for an HTTP model, a blocking
call with its own retries), so callers run it off the event loop with `asyncio.to_thread`.
Documents and queries are embedded differently (e5 prefixes, `input_type`), so they are two
methods; every returned vector has `dimension` floats and unit L2 norm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class EmbedderError(Exception):
    """Base class for embedder failures."""


class EmbedderUnavailable(EmbedderError):
    """The model cannot be loaded or reached, or it kept failing after retries."""


class EmbeddingDimensionMismatch(EmbedderError):
    """A vector's length differs from the expected dimension (model output or collection).

    The pipeline maps it to EMBEDDING_DIMENSION_UNSUPPORTED.
    """

    def __init__(self, expected: int, actual: int, where: str = "") -> None:
        self.expected = expected
        self.actual = actual
        detail = f" ({where})" if where else ""
        super().__init__(f"expected dimension {expected}, got {actual}{detail}")


class Embedder(Protocol):
    """A dense text embedding model."""

    @property
    def model_name(self) -> str:
        """Stable model identity (goes into cache keys and per-user configs)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this model returns."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order; `[]` for no texts."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Query-side vectors for many queries at once (one batch), in input order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The query-side vector of one text."""
        ...
