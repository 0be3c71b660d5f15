"""A filtered search fills top_k when top_k chunks match, however small a fraction of the
dataset they are: the filter is applied inside every retriever, not after fusion.

The real pipeline (the harness's fakes for parsing and models) writes 40 documents into real
indexes: the embedded vector index with Tantivy, and Qdrant local mode with Elasticsearch
(noida-db); 3 of them carry author=Ann (given at submit, as the wire's metadata extension),
and they are the poorest matches of the query. Unfiltered, the top 3 are others'; filtered,
all 3 are Ann's, from each retriever.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from dependency_injector import providers

from ragline.adapters.keyword_index.elasticsearch import ElasticsearchKeywordIndex
from ragline.adapters.keyword_index.tantivy import TantivyKeywordIndex
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.adapters.vector_index.qdrant import QdrantVectorIndex
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.search.use_case import HybridSearch
from ragline.domain.metadata import Eq, In
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness

DOCS, ANNS, TOP_K = 40, (7, 19, 33), 3
QUERY = "kettle water temperature"


def _text(doc: int) -> str:
    if doc in ANNS:  # one query word, once: the poorest matches
        return f"Document {doc} mentions water only in passing, among other notes."
    return f"Document {doc}: kettle water temperature, kettle water and temperature again."


@pytest.fixture(params=["embedded+tantivy", "qdrant+elasticsearch"])
async def engines(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[VectorIndex, KeywordIndex]]:
    vectors: VectorIndex
    keywords: KeywordIndex
    if request.param == "embedded+tantivy":
        vectors = EmbeddedVectorIndex(tmp_path / "vectors")
        keywords = TantivyKeywordIndex(tmp_path / "tantivy")
    else:
        url: str = request.getfixturevalue("elasticsearch_url")
        vectors = QdrantVectorIndex("filtered", path=str(tmp_path / "qdrant"))
        keywords = ElasticsearchKeywordIndex(url, index=f"filtered-{uuid.uuid4().hex}")
    yield vectors, keywords
    await vectors.close()
    await keywords.close()


async def test_a_rare_filter_still_fills_top_k(
    tmp_path: Path, engines: tuple[VectorIndex, KeywordIndex]
) -> None:
    vectors, keywords = engines
    h = Harness(tmp_path)
    h.container.vectors.override(providers.Object(vectors))
    h.container.keywords.override(providers.Object(keywords))
    h.container.stage_services.reset()
    h.container.pipeline.reset()
    pipeline = h.container.pipeline()
    h.configure_embedding()
    for doc in range(DOCS):
        labels = {"author": "Ann" if doc in ANNS else f"writer-{doc}", "n": doc}
        task = h.task(
            "md",
            original_file_id=1000 + doc,
            source_object_key=f"files/doc-{doc}.md",
            md_object_key=f"md/doc-{doc}.md",
            content=_text(doc),
            metadata=labels,
        )
        await pipeline.handle(task)
        assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    search: HybridSearch = h.container.hybrid_search()
    ann = {str(1000 + doc) for doc in ANNS}

    [plain] = await search.search_many([QUERY], "7", "3", TOP_K)
    assert len(plain.hits) == TOP_K and not {h.doc_id for h in plain.hits} <= ann

    [only_ann] = await search.search_many([QUERY], "7", "3", TOP_K, Eq("author", "Ann"))
    assert only_ann.degraded == ()
    assert len(only_ann.hits) == TOP_K
    assert {hit.doc_id for hit in only_ann.hits} == ann
    [trace] = await search.trace_many([QUERY], "7", "3", TOP_K, Eq("author", "Ann"))
    for name in ("dense", "sparse", "bm25"):  # each retriever ranked Ann's chunks only
        ranked = {hit.doc_id for hit in trace.rankings[name]}
        assert ranked and ranked <= ann, (name, ranked)

    some = In("author", ("Ann", "writer-1"))
    [two] = await search.search_many([QUERY], "7", "3", 10, some)
    assert {hit.doc_id for hit in two.hits} == ann | {"1001"}
