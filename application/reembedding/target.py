"""What a re-embedding moves its user to: the EMBEDDING config its copy embeds with."""

from __future__ import annotations

from typing import TypeAlias

from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.domain.reembedding import EmbeddingSpec, Reembedding

Target: TypeAlias = EmbeddingConfig | EmbeddingSpec
"""What a re-embedding moves to: a whole config, or a bare spec (no base_url, no key)."""


def target_config(item: Reembedding) -> EmbeddingConfig:
    """The EMBEDDING config the re-embedding moves its user to (the default after the swap)."""
    spec = item.target
    return EmbeddingConfig(
        item.user_id,
        spec.provider,
        spec.model,
        spec.dimension,
        item.target_base_url,
        item.target_api_key,
    )
