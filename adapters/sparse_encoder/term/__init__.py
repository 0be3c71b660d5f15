"""Sparse encoder adapter: hashed term ids with saturated BM25 term-frequency weights."""

from ragline.adapters.sparse_encoder.term.encoder import TermSparseEncoder, term_id

__all__ = ["TermSparseEncoder", "term_id"]
