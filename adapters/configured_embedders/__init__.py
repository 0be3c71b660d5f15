"""The EmbedderResolver: a user's EMBEDDING config -> the matching embedder adapter (cached)."""

from ragline.adapters.configured_embedders.resolver import (
    ConfiguredEmbedders,
    LazySentenceEmbedder,
)

__all__ = ["ConfiguredEmbedders", "LazySentenceEmbedder"]
