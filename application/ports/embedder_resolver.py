"""Embedder resolver port: a user's EMBEDDING configuration -> the Embedder to use.

VECTORIZING embeds with the model the user configured (docs/design/0001-pipeline-contract.md
"Embedding per user"). The adapter decides how a (provider, model, base_url, api_key) becomes an
Embedder and may cache them; the api_key must never reach a log line or an exception message.
"""

from __future__ import annotations

from typing import Protocol

from ragline.application.ports.embedder import Embedder
from ragline.application.ports.repositories.model_configs import EmbeddingConfig


class UnusableEmbeddingConfig(Exception):
    """The configuration cannot give an embedder (unknown provider, no model name, ...);
    the user has to fix it, so the pipeline reports LLM_CONFIG_MISSING."""


class EmbedderResolver(Protocol):
    async def resolve(self, config: EmbeddingConfig) -> Embedder:
        """The embedder for `config`. Raises UnusableEmbeddingConfig for a configuration that
        cannot work, EmbedderUnavailable when the model cannot be loaded or reached."""
        ...

    async def probe(self, config: EmbeddingConfig) -> int:
        """Embed one text with `config`'s model, once (no retries, a short deadline), before
        the config is stored: the length of the vector it returns, whatever `config.dimension`
        says. Raises UnusableEmbeddingConfig (cannot work: unknown provider, a model the
        provider does not serve, no base_url) or EmbedderUnavailable (cannot be loaded or
        reached; the message says why, never the api_key)."""
        ...
