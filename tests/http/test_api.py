"""The HTTP API: who may call what, the problem shape, the seed's debug endpoints, runs,
chunk preview, health, metrics and the offline Swagger UI."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, bearer, finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
PROBLEM = "application/problem+json"


def _assert_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"]
    return body


def test_no_token_or_a_wrong_one_is_401(client: TestClient) -> None:
    _assert_problem(client.get("/api/v1/runs/x"), 401)
    response = client.get("/api/v1/runs/x", headers=bearer("not-a-token-at-all-really"))
    assert _assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"
    assert client.get("/healthz").status_code == 200  # liveness needs no token


def test_a_submitted_seed_task_runs_and_only_its_owner_sees_it(client: TestClient) -> None:
    task = {**SEED_TASK, "task_id": "seed-1", "user_id": 1001}
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    assert response.json() == {"task_id": "seed-1", "routing_key": SEED_TASK["file_type"]}
    run = finished_run(client, "seed-1", ALICE_TOKEN)
    # the seed's object does not exist in this store: CLEANING fails, and says why
    assert run["pipeline_status"] == "FAILED"
    assert run["failure_code"] == "SOURCE_FILE_NOT_FOUND"
    assert run["user_message"]
    assert run["stages"][0]["stage"] == "CLEANING"
    assert run["user_id"] == "1001"
    _assert_problem(client.get("/api/v1/runs/seed-1", headers=bearer(BOB_TOKEN)), 404)
    assert client.get("/api/v1/runs/seed-1", headers=bearer(SERVICE_TOKEN)).status_code == 200


def test_a_user_token_submits_for_itself_only(client: TestClient) -> None:
    task = {**SEED_TASK, "task_id": "seed-2", "user_id": 1001}
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(BOB_TOKEN))
    _assert_problem(response, 403)
    response = client.post("/api/v1/mq/send/parse-task", json=task, headers=bearer(ALICE_TOKEN))
    _assert_problem(response, 403)


def test_a_bad_task_names_the_field(client: TestClient) -> None:
    task = {**SEED_TASK, "user_id": "1001"}  # strict: a string is not an id
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    body = _assert_problem(response, 422)
    assert {"field": "user_id", "message": "Input should be a valid integer"} in body["errors"]


def test_a_raw_message_is_published_unchanged_and_the_worker_answers_it(
    client: TestClient,
) -> None:
    raw = {"task_id": "raw-1", "file_type": "pdf", "user_id": 1001}  # not a valid task
    response = client.post("/api/v1/mq/send/parse-task", json=raw, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    assert response.json()["routing_key"] == "pdf"
    run = finished_run(client, "raw-1", ALICE_TOKEN)
    assert run["failure_code"] == "INVALID_TASK_CONTEXT"
    response = client.post(
        "/api/v1/mq/send/parse-task", json={"task_id": "raw-2"}, headers=bearer(SERVICE_TOKEN)
    )
    assert _assert_problem(response, 422)["errors"] == [
        {"field": "file_type", "message": "Field required"}
    ]


def test_extract_sync_parses_an_upload_and_refuses_what_it_cannot(client: TestClient) -> None:
    docx = (ROOT / "examples/docs/sourdough-bread.docx").read_bytes()
    response = client.post(
        "/api/v1/parser/extract_sync",
        files={"file": ("bread.docx", docx)},
        headers=bearer(ALICE_TOKEN),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["markdown"].startswith("# Baking Sourdough Bread")
    assert body["chars"] == len(body["markdown"])
    response = client.post(
        "/api/v1/parser/extract_sync",
        files={"file": ("x.exe", b"MZ\x90\x00")},
        headers=bearer(ALICE_TOKEN),
    )
    assert "UNSUPPORTED_FILE_TYPE" in _assert_problem(response, 422)["detail"]
    response = client.post(
        "/api/v1/parser/extract_sync",
        files={"file": ("broken.pdf", b"%PDF-1.4 not really")},
        headers=bearer(ALICE_TOKEN),
    )
    assert "FILE_CONTENT_INVALID" in _assert_problem(response, 422)["detail"]
    _assert_problem(client.post("/api/v1/parser/extract_sync", headers=bearer(ALICE_TOKEN)), 422)


def test_a_body_over_the_limit_is_413(client: TestClient) -> None:
    response = client.post(
        "/api/v1/parser/extract_sync",
        files={"file": ("big.txt", b"x" * 2_100_000)},
        headers=bearer(ALICE_TOKEN),
    )
    _assert_problem(response, 413)

    def streamed() -> Iterator[bytes]:  # no Content-Length: the bound applies as it arrives
        for _ in range(40):
            yield b"y" * 100_000

    response = client.post(
        "/api/v1/chunks/preview",
        content=streamed(),
        headers={**bearer(ALICE_TOKEN), "content-type": "application/json"},
    )
    _assert_problem(response, 413)


def test_chunk_preview_of_text_and_of_a_docx(client: TestClient) -> None:
    text = "# Title\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(6))
    response = client.post(
        "/api/v1/chunks/preview", json={"text": text}, headers=bearer(ALICE_TOKEN)
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["parents"] and body["markdown"] == text
    for parent in body["parents"]:
        start, end = parent["span"]
        assert body["markdown"][start:end] == parent["text"]
    docx = (ROOT / "examples/docs/sourdough-bread.docx").read_bytes()
    response = client.post(
        "/api/v1/chunks/preview/file",
        files={"file": ("bread.docx", docx)},
        headers=bearer(ALICE_TOKEN),
    )
    assert response.status_code == 200, response.text
    assert response.json()["parents"]
    response = client.post(
        "/api/v1/chunks/preview",
        json={"text": "x", "plan": "nope"},
        headers=bearer(ALICE_TOKEN),
    )
    assert "unknown chunk plan" in _assert_problem(response, 422)["detail"]


def test_search_before_anything_was_indexed_has_no_hits(client: TestClient) -> None:
    response = client.post(
        "/api/v1/search",
        json={"query": "anything", "dataset_ids": [1]},
        headers=bearer(ALICE_TOKEN),
    )
    assert response.status_code == 200 and response.json() == {"hits": []}
    response = client.post(
        "/api/v1/search",
        json={"query": "anything", "dataset_ids": [1]},
        headers=bearer(SERVICE_TOKEN),
    )
    assert "user_id is required" in _assert_problem(response, 422)["detail"]


def test_readiness_metrics_and_liveness(client: TestClient) -> None:
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["ready"] is True
    assert [c["part"] for c in ready.json()["checks"]] == [
        "database",
        "object storage",
        "message bus",
        "vector index",
        "keyword index",
        "embedder",
    ]
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'ragline_http_requests_total{method="GET",route="/readyz",status="200"}' in metrics.text


def test_the_swagger_ui_and_every_asset_it_references_are_served(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(a.startswith("/") for a in assets)  # nothing from a CDN
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert "/openapi.json" in page.text
    spec = client.get("/openapi.json").json()
    for path in (
        "/api/v1/parser/extract_sync",
        "/api/v1/parser/task/submit",
        "/api/v1/mq/send/parse-task",
    ):
        assert path in spec["paths"]


@pytest.mark.parametrize("path", ["/api/v1/runs/x"])
def test_without_tokens_the_server_acts_as_the_default_user(
    open_client: TestClient, path: str
) -> None:
    _assert_problem(open_client.get(path), 404)  # no 401: open on loopback
    task = {**SEED_TASK, "task_id": "open-1", "user_id": 1}
    # user 1 is a tenant like any other: its own prefix of the tenant buckets only
    refused = open_client.post("/api/v1/parser/task/submit", json=task)
    assert _assert_problem(refused, 403)["detail"] == (
        "source: bucket 'tolink-rag-docs' is not open to tenants"
    )
    task.update(
        source_bucket="sources",
        source_object_key="1/raw/doc-001.pdf",
        md_bucket="markdown",
        md_object_key="1/parsed/doc-001.md",
        image_bucket="markdown",
        image_prefix="1/images/doc-001/",
    )
    assert open_client.post("/api/v1/parser/task/submit", json=task).status_code == 202
    run = open_client.get("/api/v1/runs/open-1")
    deadline = time.monotonic() + 60
    while run.json().get("finished_at") is None and time.monotonic() < deadline:
        time.sleep(0.2)
        run = open_client.get("/api/v1/runs/open-1")
    assert run.json()["user_id"] == "1"


def _sample(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))  # exposition order
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") + r" (\S+)"
    found = re.search("^" + pattern + "$", text, re.M)
    return float(found.group(1)) if found else 0.0


def test_the_pipeline_counters_move_when_a_task_runs(client: TestClient) -> None:
    before = client.get("/metrics").text
    task = {**SEED_TASK, "task_id": "metrics-1", "user_id": 1001}
    client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    finished_run(client, "metrics-1", ALICE_TOKEN)
    labels = {"failure_code": "SOURCE_FILE_NOT_FOUND", "status": "FAILED"}
    deadline = time.monotonic() + 30
    after = client.get("/metrics").text
    while _sample(after, "ragline_outbox_results_total", outcome="sent") <= _sample(
        before, "ragline_outbox_results_total", outcome="sent"
    ):
        assert time.monotonic() < deadline, "the result was never relayed"
        time.sleep(0.2)
        after = client.get("/metrics").text
    assert _sample(after, "ragline_runs_finished_total", **labels) == (
        _sample(before, "ragline_runs_finished_total", **labels) + 1
    )
    stage = {"stage": "CLEANING", "status": "FAILED"}
    assert _sample(after, "ragline_stage_duration_seconds_count", **stage) == (
        _sample(before, "ragline_stage_duration_seconds_count", **stage) + 1
    )
    assert _sample(after, "ragline_tasks_in_flight") == 0
