"""Keyword (BM25) index vendors (RAGLINE_KEYWORD_INDEX)."""

from __future__ import annotations

from collections.abc import Callable

from ragline.application.ports.keyword_index import KeywordIndex
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import KeywordVendor, Settings

Build = Callable[[Settings], KeywordIndex]


def tantivy(settings: Settings) -> KeywordIndex:
    from ragline.adapters.keyword_index.tantivy import TantivyKeywordIndex

    return TantivyKeywordIndex(settings.data_dir / "tantivy")


def elasticsearch(settings: Settings) -> KeywordIndex:
    from ragline.adapters.keyword_index.elasticsearch import ElasticsearchKeywordIndex

    chosen = settings.elasticsearch
    return ElasticsearchKeywordIndex(chosen.url, index=chosen.index)


KEYWORD_INDEX: Port[KeywordVendor, Build] = Port(
    part="keyword_index",
    setting="keyword_index",
    names=KeywordVendor,
    vendors={
        KeywordVendor.TANTIVY: Vendor(tantivy, "tantivy"),
        KeywordVendor.ELASTICSEARCH: Vendor(elasticsearch, "elasticsearch"),
    },
    chosen=lambda settings: settings.keyword_index,
)
