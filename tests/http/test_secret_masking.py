"""A user's own model key never leaves ragline, even when the model server echoes it.

A real model endpoint on loopback answers every `POST …/embeddings` with an error whose body
repeats the request's Authorization header (as some OpenAI-compatible servers and proxies
do). A task of a user whose EMBEDDING config carries key K fails at VECTORIZING; K (or any
8-character piece of it) must then be in none of: the stored run and its HTTP view, the
result message in the outbox, the log, /metrics, the problem body of a search.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http.problems import problem
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.testing.services.echo_server import EchoingServer
from ragline.testing.services.echo_server import leaked as leaked_pieces
from tests.fakes.harness import encode_result
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, bearer, finished_run
from tests.http.test_documents_and_model_configs import SEED_TASK, TEXT

KEY = "sk-user-1001-Zq8vW3nT6yB1mK4pR7sL0dF9hJ2cX5aE"


def leaked(text: str) -> list[str]:
    return leaked_pieces(text, KEY)


def _configure(client: TestClient, base_url: str) -> None:
    config = {
        "provider": "openai-compatible",
        "model": "echo-embedder",
        "dimension": 8,
        "base_url": base_url,
        "api_key": KEY,
    }
    response = client.put(
        "/api/v1/users/1001/model-configs/embedding", json=config, headers=bearer(SERVICE_TOKEN)
    )
    assert response.status_code == 200, response.text
    assert not leaked(response.text)


def _submit(client: TestClient, task_id: str) -> dict[str, Any]:
    key = f"1001/raw/{task_id}.txt"
    storage = client.app.state.container.storage()  # type: ignore[attr-defined]

    async def upload() -> None:
        await storage.ensure_bucket("sources")
        await storage.ensure_bucket("markdown")
        await storage.put_bytes("sources", key, TEXT.encode())

    asyncio.run(upload())
    task = {
        **SEED_TASK,
        "task_id": task_id,
        "user_id": 1001,
        "file_type": "txt",
        "source_filename": "tea.txt",
        "source_bucket": "sources",  # the tenant buckets of the default settings
        "source_object_key": key,
        "md_bucket": "markdown",
        "md_object_key": f"1001/parsed/{task_id}.md",
        "image_bucket": "markdown",
        "image_prefix": f"1001/images/{task_id}/",
    }
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(ALICE_TOKEN))
    assert response.status_code == 202, response.text
    return finished_run(client, task_id, ALICE_TOKEN)


def _outbox_bodies(client: TestClient) -> str:
    container = client.app.state.container  # type: ignore[attr-defined]

    async def read() -> str:
        uow_factory = await container.uow_factory()
        async with uow_factory() as uow:
            rows = await uow.outbox.list_messages(None, None, after_id=0, limit=1000)
        return "\n".join(encode_result(r.result).decode() + (r.last_error or "") for r in rows)

    return asyncio.run(read())


@pytest.mark.parametrize(
    ("status", "padding"),
    [(401, 0), (500, 0), (401, 190)],
    ids=["401", "500-retried", "401-key-across-the-300-character-cut"],
)
def test_a_users_key_echoed_by_the_model_server_is_masked_everywhere(
    client: TestClient,
    echoing_server: EchoingServer,
    caplog: pytest.LogCaptureFixture,
    status: int,
    padding: int,
) -> None:
    caplog.set_level(logging.DEBUG)
    _configure(client, echoing_server.base_url(status, padding, well=1))
    run = _submit(client, f"echo-{status}-{padding}")

    # the server really was sent the key and really echoed it
    assert echoing_server.requests, run["failure_reason"]
    assert echoing_server.requests[-1]["authorization"] == f"Bearer {KEY}"
    assert run["pipeline_status"] == "FAILED" and run["failed_stage"] == "VECTORIZING", run
    assert f"HTTP {status}" in run["failure_reason"], run
    assert "Bearer ***" in run["failure_reason"] or padding, run  # the echo, masked

    views = [
        client.get(f"/api/v1/runs/{run['task_id']}", headers=bearer(token)).text
        for token in (ALICE_TOKEN, SERVICE_TOKEN)
    ]
    views.append(client.get("/api/v1/runs", headers=bearer(ALICE_TOKEN)).text)
    docs = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN))
    views.append(docs.text)
    search = client.post(
        "/api/v1/search",
        json={"query": "green tea", "dataset_ids": [2001]},
        headers=bearer(ALICE_TOKEN),
    )
    # the query embedding meets the same server: dense is left out, the rest answer
    assert search.status_code == 200, search.text
    assert search.json()["degraded"] == ["dense"]
    views.append(search.text)
    metrics = client.get("/metrics")
    assert metrics.status_code == 200

    assert not leaked(json.dumps(run)), run["failure_reason"]
    for view in views:
        assert not leaked(view), view
    outbox = _outbox_bodies(client)
    assert run["task_id"] in outbox
    assert not leaked(outbox), outbox
    assert not leaked(metrics.text)
    assert "HTTP" in caplog.text
    assert not leaked(caplog.text), [
        r.getMessage() for r in caplog.records if leaked(r.getMessage())
    ]


def test_a_problem_detail_never_carries_a_known_secret() -> None:
    key = "sk-in-a-problem-Hj6kL9zX3c"
    EmbeddingConfig("u9", "openai", "m", 8, "http://x", key)
    response = problem(409, "Conflict", f"the model said: {key}", errors=[])
    assert key.encode() not in response.body and b"the model said: ***" in response.body
