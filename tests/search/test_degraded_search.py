"""Search degrades when a retriever fails: it answers from those that work and names the
missing ones; with none working it raises SearchUnavailable (HTTP 503). On the fakes
through the real container's HybridSearch (a real Elasticsearch outage:
tests/http/test_search_outage.py, tests/cli/test_search_degraded.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from dependency_injector import providers

from ragline.application.evaluation import DegradedEvaluation, EvaluateRetrieval, GoldQuestion
from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.ports.keyword_index import KeywordHit, KeywordIndexUnavailable
from ragline.application.ports.vector_index import VectorIndexUnavailable
from ragline.application.search.use_case import HybridSearch, SearchUnavailable
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness

QUERY = "alpha beta topic 3"


class RecordingMetrics:
    """The search part of the metrics port, recorded (the rest reports nothing)."""

    def __init__(self) -> None:
        self.searches: list[tuple[str, tuple[str, ...]]] = []

    def search_answered(self, outcome: str, missing: Sequence[str]) -> None:
        self.searches.append((outcome, tuple(missing)))

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None


@pytest.fixture
async def indexed(tmp_path: Path) -> tuple[Harness, RecordingMetrics]:
    h = Harness(tmp_path)
    h.configure_embedding()
    task = h.task("md")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    metrics = RecordingMetrics()
    h.container.metrics.override(providers.Object(metrics))
    return h, metrics


def _search(h: Harness) -> HybridSearch:
    search: HybridSearch = h.container.hybrid_search()
    return search


async def test_every_retriever_working_is_not_degraded(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, metrics = indexed
    [answer] = await _search(h).search_many([QUERY], "7", "3", 5)
    assert answer.hits and answer.degraded == ()
    assert metrics.searches == [("complete", ())]


async def test_keyword_index_down_answers_from_the_vectors(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, metrics = indexed
    h.faults.arm("keywords.search", KeywordIndexUnavailable("es: connection refused"), None)
    [answer] = await _search(h).search_many([QUERY], "7", "3", 5)
    assert answer.degraded == ("bm25",)
    assert answer.hits, "dense and sparse still answer"
    assert all("bm25" not in hit.ranks for hit in answer.hits)
    assert metrics.searches[-1] == ("degraded", ("bm25",))


async def test_vector_index_down_answers_from_bm25(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, metrics = indexed
    h.faults.arm("vectors.query_dense", VectorIndexUnavailable("qdrant down"), None)
    h.faults.arm("vectors.query_sparse", VectorIndexUnavailable("qdrant down"), None)
    [answer] = await _search(h).search_many([QUERY], "7", "3", 5)
    assert answer.degraded == ("dense", "sparse")
    assert answer.hits and all(set(hit.ranks) == {"bm25"} for hit in answer.hits)
    assert metrics.searches[-1] == ("degraded", ("dense", "sparse"))


async def test_an_embedding_model_out_of_reach_costs_only_the_dense_retriever(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, _ = indexed
    h.faults.arm("embedder.embed_queries", EmbedderUnavailable("endpoint refused"), None)
    answers = await _search(h).search_many([QUERY, "gamma delta"], "7", "3", 5)
    assert [a.degraded for a in answers] == [("dense",), ("dense",)]
    assert all(a.hits for a in answers)
    assert h.faults.hits["vectors.query_dense"] == 0, "no query vector, no dense query"


async def test_every_retriever_down_is_unavailable(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, metrics = indexed
    h.faults.arm("keywords.search", KeywordIndexUnavailable("es down"), None)
    h.faults.arm("vectors.query_dense", VectorIndexUnavailable("qdrant down"), None)
    h.faults.arm("vectors.query_sparse", VectorIndexUnavailable("qdrant down"), None)
    with pytest.raises(SearchUnavailable) as raised:
        await _search(h).search_many([QUERY], "7", "3", 5)
    assert raised.value.missing == ("dense", "sparse", "bm25")
    assert "bm25" in str(raised.value) and "es down" not in str(raised.value)
    assert metrics.searches[-1] == ("unavailable", ("dense", "sparse", "bm25"))


async def test_a_failure_that_is_not_an_outage_is_not_hidden(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, _ = indexed
    h.faults.arm("keywords.search", TypeError("a bug, not an outage"), None)
    with pytest.raises(TypeError):
        await _search(h).search_many([QUERY], "7", "3", 5)


async def test_the_trace_for_evaluation_names_the_missing_retriever(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    h, _ = indexed
    h.faults.arm("keywords.search", KeywordIndexUnavailable("es down"), None)
    [trace] = await _search(h).trace_many([QUERY], "7", "3", 5)
    assert trace.degraded == ("bm25",) and trace.rankings["bm25"] == []
    assert trace.hits


async def test_a_retriever_that_hangs_is_left_out_after_its_deadline(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    """A blackholed engine (a proxy that accepts and never answers) costs the deadline, not
    the client's request: its retriever is missing like a refused one."""
    h, metrics = indexed

    async def never_answers(*args: object) -> list[KeywordHit]:
        await asyncio.Event().wait()
        return []

    h.keywords.search = never_answers  # type: ignore[method-assign]
    search = _search(h)
    search.tuning = attrs.evolve(search.tuning, retriever_timeout=0.2)
    [answer] = await search.search_many([QUERY], "7", "3", 5)
    assert answer.degraded == ("bm25",) and answer.hits
    assert metrics.searches[-1] == ("degraded", ("bm25",))


async def test_an_evaluation_refuses_figures_measured_without_a_retriever(
    indexed: tuple[Harness, RecordingMetrics],
) -> None:
    """`ragline eval` scores each retriever: with one missing its figures would be zeros
    that read like a bad ranking, so it says what is missing instead."""
    h, _ = indexed
    h.faults.arm("keywords.search", KeywordIndexUnavailable("es down"), None)
    evaluate: EvaluateRetrieval = h.container.evaluate_retrieval()
    question = GoldQuestion("q1", QUERY, snippet="topic 3")
    with pytest.raises(DegradedEvaluation, match="bm25"):
        await evaluate([question], "7", "3", 5)
    h.faults.disarm("keywords.search")
    report = await evaluate([question], "7", "3", 5)
    assert report.questions == 1
