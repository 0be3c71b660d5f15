"""A constant embedder, to time everything in ingest except the model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

DIMENSION = 384
_UNIT = [1.0 / math.sqrt(DIMENSION)] * DIMENSION


class ConstantEmbedder:
    """Every text gets the same unit vector (cost: building the lists)."""

    model_name = "constant-384"
    dimension = DIMENSION

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(_UNIT) for _ in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(_UNIT) for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return list(_UNIT)


class ConstantResolver:
    """EmbedderResolver stand-in: every config resolves to the constant embedder."""

    def __init__(self) -> None:
        self._embedder = ConstantEmbedder()

    async def resolve(self, config: Any) -> ConstantEmbedder:
        return self._embedder
