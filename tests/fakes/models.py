"""Fake embedder (deterministic unit vectors), its resolver, tokenizer and sparse encoder."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from ragline.application.ports.embedder import Embedder
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.sparse_encoder import SparseVector
from tests.fakes.faults import Faults


def _unit(text: str, dimension: int) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [((digest[i % len(digest)] + i) % 97) + 1.0 for i in range(dimension)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


class FakeEmbedder:
    def __init__(
        self, dimension: int, faults: Faults | None = None, output_dimension: int | None = None
    ) -> None:
        self._dimension = dimension
        self.output_dimension = output_dimension or dimension
        self.faults = faults or Faults()
        self.embedded: list[str] = []

    @property
    def model_name(self) -> str:
        return f"fake-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.faults.check("embedder.embed")
        self.embedded.extend(texts)
        return [_unit(t, self.output_dimension) for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.faults.check("embedder.embed_queries")
        return [_unit(t, self.output_dimension) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return _unit(text, self.output_dimension)


class FakeEmbedderResolver:
    """Gives a FakeEmbedder of the configured dimension (or `model_dimension` if set)."""

    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.model_dimension: int | None = None
        self.output_dimension: int | None = None
        self.embedders: list[FakeEmbedder] = []
        self.probed: list[EmbeddingConfig] = []

    async def probe(self, config: EmbeddingConfig) -> int:
        """The dimension the fake model returns (`model_dimension`, else the config's)."""
        self.faults.check("embedders.probe")
        self.probed.append(config)
        if config.provider == "unknown":
            raise UnusableEmbeddingConfig(f"unknown provider {config.provider!r}")
        return self.model_dimension or config.dimension

    async def resolve(self, config: EmbeddingConfig) -> Embedder:
        self.faults.check("embedders.resolve")
        if config.provider == "unknown":
            raise UnusableEmbeddingConfig(f"unknown provider {config.provider!r}")
        embedder = FakeEmbedder(
            self.model_dimension or config.dimension, self.faults, self.output_dimension
        )
        self.embedders.append(embedder)
        return embedder

    @property
    def embedded(self) -> list[str]:
        return [t for e in self.embedders for t in e.embedded]


class FakeTokenizer:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()

    def tokenize(self, text: str) -> list[str]:
        self.faults.check("tokenizer.tokenize")
        return [t for t in text.lower().replace("#", " ").split() if t.strip()]


class FakeSparseEncoder:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.encoded: list[str] = []

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        self.faults.check("sparse.encode")
        self.encoded.extend(texts)
        return [self._encode(t) for t in texts]

    def encode_token_lists(self, token_lists: Sequence[Sequence[str]]) -> list[SparseVector]:
        self.faults.check("sparse.encode")
        self.encoded.extend(" ".join(tokens) for tokens in token_lists)
        return [self._encode_tokens(tokens) for tokens in token_lists]

    def encode_query(self, text: str) -> SparseVector:
        return self._encode(text)

    @staticmethod
    def _encode(text: str) -> SparseVector:
        return FakeSparseEncoder._encode_tokens(text.lower().split())

    @staticmethod
    def _encode_tokens(tokens: Sequence[str]) -> SparseVector:
        counts: dict[int, float] = {}
        for token in tokens:
            term = int.from_bytes(hashlib.sha256(token.encode()).digest()[:4], "big")
            counts[term] = counts.get(term, 0.0) + 1.0
        indices = sorted(counts)
        return SparseVector(indices, [counts[i] for i in indices])
