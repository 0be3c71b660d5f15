"""Qdrant vector index adapter: local mode (`path=` / ":memory:") or a server (`url=`)."""

from ragline.adapters.vector_index.qdrant.index import QdrantVectorIndex

__all__ = ["QdrantVectorIndex"]
