"""Sparse encoder adapter: hashed term ids with saturated BM25 term-frequency weights."""

from ragline.adapters.term_sparse.encoder import TermSparseEncoder, term_id

__all__ = ["TermSparseEncoder", "term_id"]
