"""Models for the SEMANTIC and LLM chunk strategies, built only when a plan uses them.

The SEMANTIC strategy embeds sentences with the same model the settings provision for
dense indexing; loading it is deferred to the first `embed` call, so `ragline chunk` with
the default plan never loads a model. The LLM strategy needs a chat endpoint; without one
the `llm` plan falls back to RECURSIVE, as SPEC §6 asks for a model that is unavailable.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ragline.bootstrap.settings import Settings


class LazySentenceEmbedder:
    """`embed(texts)` for the chunker, backed by the default dense embedder (built once)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._embedder: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            if self._embedder is None:
                self._embedder = self._build()
        vectors: list[list[float]] = self._embedder.embed_documents(list(texts))
        return vectors

    def _build(self) -> Any:
        from ragline.bootstrap.embedders import ConfiguredEmbedders, default_embedding_config

        config = default_embedding_config(self._settings, "chunker")
        return ConfiguredEmbedders(self._settings).build(config)


def chat_model(settings: Settings) -> Any:
    """The configured chat model, or None (the `llm` plan then cuts recursively)."""
    if not (settings.llm_base_url and settings.llm_model):
        return None
    from ragline.adapters.llm_openai import OpenAIChatModel

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAIChatModel(
        settings.llm_base_url,
        settings.llm_model,
        api_key=key,
        timeout=settings.llm_timeout_seconds,
    )
