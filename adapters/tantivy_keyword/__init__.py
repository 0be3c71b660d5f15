"""Embedded keyword (BM25) index on Tantivy: the default, no server needed."""

from ragline.adapters.tantivy_keyword.index import TantivyKeywordIndex

__all__ = ["TantivyKeywordIndex"]
