"""Embedded keyword (BM25) index on Tantivy: the default, no server needed."""

from ragline.adapters.keyword_index.tantivy.index import TantivyKeywordIndex

__all__ = ["TantivyKeywordIndex"]
