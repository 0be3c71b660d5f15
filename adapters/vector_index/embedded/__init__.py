"""Embedded vector index: one SQLite file, exact numpy search (the embedded default)."""

from ragline.adapters.vector_index.embedded.index import EmbeddedVectorIndex

__all__ = ["EmbeddedVectorIndex"]
