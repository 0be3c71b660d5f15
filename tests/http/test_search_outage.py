"""POST /api/v1/search while a retriever's engine is down: a real Elasticsearch-API server
(noida-db) stopped mid-test, or a closed port, answers from the other retrievers with
`degraded`, counted in /metrics; with every retriever down, 503 (not 500)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dependency_injector import providers
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.ports.vector_index import VectorIndexUnavailable
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from ragline.testing.services.fixtures import free_port, start_noida, stop_process
from tests.fakes.faults import Faults
from tests.fakes.indexes import FakeVectorIndex
from tests.fakes.models import FakeEmbedderResolver
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, TOKENS, bearer
from tests.http.test_documents_and_model_configs import (
    CONFIGS,
    _default_embedding,
    _index_a_text_file,
)

QUERY = {"query": "how hot should the water be for green tea", "dataset_ids": [2001]}


def _counter(metrics: str, name: str, label: str) -> float:
    found = re.search(rf"^{name}{{{label}}} (\S+)$", metrics, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.fixture
def noida(tmp_path: Path) -> Iterator[tuple[object, str]]:
    """A noida-db of this test's own, so the test may stop it."""
    proc, url = start_noida(tmp_path / "noida", tmp_path / "noida.log")
    try:
        yield proc, url
    finally:
        stop_process(proc)


def test_elasticsearch_stopped_mid_test_leaves_dense_and_sparse_answering(
    tmp_path: Path, noida: tuple[object, str]
) -> None:
    proc, url = noida
    container = container_for(
        tmp_path / "data", keyword_index="elasticsearch", elasticsearch_url=url
    )
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container  # the tests' handle for seeding; the app reads its Entry
    with TestClient(app) as client:
        configs = CONFIGS.format(user="1001")
        put = client.put(
            f"{configs}/embedding", json=_default_embedding(client), headers=bearer(SERVICE_TOKEN)
        )
        assert put.status_code == 200, put.text
        run = _index_a_text_file(client, 1001, "tea-es", 555)
        assert run["pipeline_status"] == "SUCCESS", run

        whole = client.post("/api/v1/search", json=QUERY, headers=bearer(ALICE_TOKEN))
        assert whole.status_code == 200, whole.text
        assert whole.json()["degraded"] == [] and whole.json()["hits"]
        before = client.get("/metrics").text

        stop_process(proc)  # type: ignore[arg-type]
        degraded = client.post("/api/v1/search", json=QUERY, headers=bearer(ALICE_TOKEN))
        assert degraded.status_code == 200, degraded.text
        assert degraded.json()["degraded"] == ["bm25"]
        assert degraded.json()["hits"], "the vectors still answer"
        assert {h["doc_id"] for h in degraded.json()["hits"]} == {"555"}

        after = client.get("/metrics").text
        failures = 'ragline_search_retriever_failures_total{retriever="bm25"}'
        assert failures in after
        name, label = "ragline_search_retriever_failures_total", 'retriever="bm25"'
        assert _counter(after, name, label) == _counter(before, name, label) + 1
        name, label = "ragline_searches_total", 'outcome="degraded"'
        assert _counter(after, name, label) == _counter(before, name, label) + 1


def test_a_closed_port_is_degraded_and_every_retriever_down_is_503(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    container = container_for(
        tmp_path / "data", keyword_index="elasticsearch", elasticsearch_url=closed
    )
    faults = Faults()
    container.embedders.override(providers.Object(FakeEmbedderResolver(faults)))
    container.vectors.override(providers.Object(FakeVectorIndex(faults)))
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container  # the tests' handle for seeding; the app reads its Entry
    with TestClient(app) as client:
        body = {"provider": "fake", "model": "fake-model", "dimension": 8}
        put = client.put(
            f"{CONFIGS.format(user='1001')}/embedding", json=body, headers=bearer(SERVICE_TOKEN)
        )
        assert put.status_code == 200, put.text

        answer = client.post("/api/v1/search", json=QUERY, headers=bearer(ALICE_TOKEN))
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"hits": [], "degraded": ["bm25"]}

        faults.arm("embedders.resolve", EmbedderUnavailable("model gone"), None)
        faults.arm("vectors.query_sparse", VectorIndexUnavailable("vectors gone"), None)
        down = client.post("/api/v1/search", json=QUERY, headers=bearer(ALICE_TOKEN))
        assert down.status_code == 503, down.text
        assert down.headers["content-type"] == "application/problem+json"
        assert down.headers["retry-after"]
        problem = down.json()
        assert problem["status"] == 503
        assert "dense, sparse, bm25" in problem["detail"]
        assert "gone" not in problem["detail"] and "127.0.0.1" not in problem["detail"]
