"""Qdrant vector index adapter: local mode (`path=` / ":memory:") or a server (`url=`)."""

from ragline.adapters.qdrant_vector.index import QdrantVectorIndex

__all__ = ["QdrantVectorIndex"]
