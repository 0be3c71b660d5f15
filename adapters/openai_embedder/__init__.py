"""OpenAI-compatible HTTP embedder (per-user EMBEDDING configs)."""

from ragline.adapters.openai_embedder.embedder import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]
