"""Keyword (BM25) index on an Elasticsearch 8/9 cluster."""

from ragline.adapters.keyword_index.elasticsearch.index import ElasticsearchKeywordIndex

__all__ = ["ElasticsearchKeywordIndex"]
