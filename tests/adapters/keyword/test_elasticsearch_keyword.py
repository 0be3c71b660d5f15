"""ElasticsearchKeywordIndex against an Elasticsearch-API server on loopback."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from elasticsearch import AsyncElasticsearch

from ragline.adapters.keyword_index.elasticsearch import ElasticsearchKeywordIndex
from ragline.adapters.keyword_index.elasticsearch.index import MAPPINGS, SETTINGS
from ragline.application.ports.keyword_index import (
    KeywordIndex,
    KeywordIndexUnavailable,
    KeywordWriteFailed,
)
from ragline.testing.kits.keyword_index import (
    KeywordIndexContract,
    MetadataFilterContract,
    doc,
    ids,
)
from ragline.testing.services.fixtures import free_port


class TestElasticsearchKeywordIndex(KeywordIndexContract, MetadataFilterContract):
    @pytest.fixture
    async def keyword_index(self, elasticsearch_url: str) -> AsyncIterator[KeywordIndex]:
        yield ElasticsearchKeywordIndex(elasticsearch_url, index=f"kit-{uuid.uuid4().hex}")


async def test_two_adapters_share_one_index(elasticsearch_url: str) -> None:
    name = f"shared-{uuid.uuid4().hex}"
    first = ElasticsearchKeywordIndex(elasticsearch_url, index=name)
    second = ElasticsearchKeywordIndex(elasticsearch_url, index=name)
    await first.write([doc("c1", "shared words")])
    assert ids(await second.search("user-1", "dataset-1", ["shared"], 10)) == ["c1"]
    await first.close()
    await second.close()


async def test_unreachable_server_is_reported() -> None:
    index = ElasticsearchKeywordIndex(f"http://127.0.0.1:{free_port()}", request_timeout=2)
    with pytest.raises(KeywordIndexUnavailable):
        await index.search("u", "d", ["x"], 10)
    with pytest.raises((KeywordIndexUnavailable, KeywordWriteFailed)):
        await index.write([doc("c1", "x")])
    await index.close()


async def test_a_partly_refused_bulk_write_is_undone(elasticsearch_url: str) -> None:
    # An index whose parent_id is numeric: the chunk with a textual parent_id is refused.
    name = f"strict-{uuid.uuid4().hex}"
    client = AsyncElasticsearch(elasticsearch_url)
    mappings = {**MAPPINGS, "properties": {**MAPPINGS["properties"], "parent_id": {"type": "long"}}}
    await client.indices.create(index=name, settings=SETTINGS, mappings=mappings)
    index = ElasticsearchKeywordIndex(elasticsearch_url, index=name)
    with pytest.raises(KeywordWriteFailed):
        await index.write([doc("ok", "words", parent_id="42"), doc("bad", "words", parent_id="p")])
    assert await index.search("user-1", "dataset-1", ["words"], 10) == []
    await index.close()
    await client.close()
