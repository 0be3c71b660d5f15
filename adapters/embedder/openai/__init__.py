"""OpenAI-compatible HTTP embedder (per-user EMBEDDING configs)."""

from ragline.adapters.embedder.openai.embedder import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]
