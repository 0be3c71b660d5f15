"""Keyword (BM25) index on an Elasticsearch 8/9 cluster."""

from ragline.adapters.elasticsearch_keyword.index import ElasticsearchKeywordIndex

__all__ = ["ElasticsearchKeywordIndex"]
