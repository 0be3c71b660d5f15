"""Dense's own candidate depth and Rocchio feedback on the query vector (issue 25), through
the container's HybridSearch on the fakes; the mixing maths by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ragline.application.evaluation import EvaluateRetrieval, GoldQuestion
from ragline.application.search.feedback import rocchio
from ragline.application.search.tuning import SearchTuning
from ragline.application.search.use_case import HybridSearch
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import DIMENSION, Harness
from tests.fakes.models import FakeEmbedder

QUERY = "alpha beta topic 3"


def test_rocchio_moves_the_query_towards_the_mean_of_its_feedback() -> None:
    # (1, 0) + 1 * mean((0, 1), (0, 1)) = (1, 1), normalised
    assert rocchio([1.0, 0.0], [[0.0, 1.0], [0.0, 1.0]], 1.0) == pytest.approx(
        [1 / math.sqrt(2), 1 / math.sqrt(2)]
    )
    # (1, 0) + 0.5 * mean((0, 1), (1, 0)) = (1.25, 0.25)
    norm = math.hypot(1.25, 0.25)
    assert rocchio([1.0, 0.0], [[0.0, 1.0], [1.0, 0.0]], 0.5) == pytest.approx(
        [1.25 / norm, 0.25 / norm]
    )


def test_rocchio_without_feedback_or_weight_keeps_the_query() -> None:
    assert rocchio([0.6, 0.8], [], 0.5) == [0.6, 0.8]
    assert rocchio([0.6, 0.8], [[1.0, 0.0]], 0.0) == [0.6, 0.8]
    with pytest.raises(ValueError):
        rocchio([0.6, 0.8], [[1.0, 0.0]], -1.0)
    with pytest.raises(ValueError):
        rocchio([0.6, 0.8], [[1.0, 0.0, 0.0]], 0.5)


def test_tuning_gives_dense_its_own_pool() -> None:
    tuning = SearchTuning(candidates_per_retriever=4, dense_candidates=20)
    assert [tuning.pool(n, 10) for n in ("dense", "sparse", "bm25")] == [200, 40, 40]
    assert SearchTuning().pool("dense", 10) == 40
    with pytest.raises(ValueError):
        SearchTuning(dense_feedback=-1)


@pytest.fixture
async def indexed(tmp_path: Path) -> Harness:
    h = Harness(tmp_path)
    h.configure_embedding()
    for i in range(3):
        task = h.task("md", source_object_key=f"files/doc-{i}.md", original_file_id=100 + i)
        await h.pipeline.handle(task)
        assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    return h


def _search(h: Harness, tuning: SearchTuning) -> HybridSearch:
    search: HybridSearch = h.container.hybrid_search()
    search.tuning = tuning
    return search


async def test_a_deeper_dense_pool_leaves_the_lexical_pools_alone(indexed: Harness) -> None:
    search = _search(indexed, SearchTuning(candidates_per_retriever=2, dense_candidates=5))
    [trace] = await search.trace_many([QUERY], "7", "3", 1)
    assert len(trace.rankings["dense"]) == 5
    assert len(trace.rankings["sparse"]) <= 2 and len(trace.rankings["bm25"]) <= 2
    report = await EvaluateRetrieval(search)([GoldQuestion("q", QUERY, "topic 3")], "7", "3", 1)
    assert list(report.candidate_recall["dense"]) == [5]
    assert list(report.candidate_recall["bm25"]) == [2]


async def test_feedback_searches_dense_again_from_the_moved_query(indexed: Harness) -> None:
    h = indexed
    model = FakeEmbedder(DIMENSION)
    query = model.embed_query(QUERY)
    texts = {cid: c.text for rows in h.db.chunks.values() for cid, c in rows.items()}
    top = [texts[hit.chunk_id] for hit in (await h.vectors.query_dense("7", "3", query, 2))]
    moved = rocchio(query, model.embed_documents(top), 0.7)
    expected = await h.vectors.query_dense("7", "3", moved, 8)
    before = h.faults.hits["vectors.query_dense"]
    [trace] = await _search(h, SearchTuning(dense_feedback=2, feedback_weight=0.7)).trace_many(
        [QUERY], "7", "3", 2
    )
    assert h.faults.hits["vectors.query_dense"] - before == 2, "one search, then one more"
    assert sorted(h.embedders.embedders[-1].embedded) == sorted(top), "the top 2 re-embedded"
    assert [x.chunk_id for x in trace.rankings["dense"]] == [x.chunk_id for x in expected]
    assert expected != await h.vectors.query_dense("7", "3", query, 8), "the query moved"


async def test_no_feedback_is_one_dense_search(indexed: Harness) -> None:
    before = indexed.faults.hits["vectors.query_dense"]
    await _search(indexed, SearchTuning()).search_many([QUERY], "7", "3", 2)
    assert indexed.faults.hits["vectors.query_dense"] - before == 1
