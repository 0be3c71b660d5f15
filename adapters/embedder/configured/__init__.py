"""The EmbedderResolver: a user's EMBEDDING config -> the matching embedder adapter (cached)."""

from ragline.adapters.embedder.configured.resolver import (
    ConfiguredEmbedders,
    LazySentenceEmbedder,
)

__all__ = ["ConfiguredEmbedders", "LazySentenceEmbedder"]
