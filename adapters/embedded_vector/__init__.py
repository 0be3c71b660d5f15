"""Embedded vector index: one SQLite file, exact numpy search (the embedded default)."""

from ragline.adapters.embedded_vector.index import EmbeddedVectorIndex

__all__ = ["EmbeddedVectorIndex"]
