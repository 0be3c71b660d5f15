"""Model configs, a dataset's documents and the runs listing over HTTP: a document indexed
through the real embedded container is listed, searched, deleted from every store, and no
tenant reads or writes another's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, bearer, finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
TEXT = "Green tea is brewed with water at about 80 degrees.\n\nBlack tea wants boiling water.\n"
CONFIGS = "/api/v1/users/{user}/model-configs"


def _default_embedding(client: TestClient) -> dict[str, Any]:
    default = client.app.state.container.default_embedding()  # type: ignore[attr-defined]
    return {"provider": default.provider, "model": default.model, "dimension": default.dimension}


def _index_a_text_file(client: TestClient, user: int, task_id: str, doc: int) -> dict[str, Any]:
    key = f"raw/{task_id}.txt"
    storage = client.app.state.container.storage()  # type: ignore[attr-defined]

    async def upload() -> None:
        await storage.ensure_bucket(SEED_TASK["source_bucket"])
        await storage.put_bytes(SEED_TASK["source_bucket"], key, TEXT.encode())

    asyncio.run(upload())
    task = {
        **SEED_TASK,
        "task_id": task_id,
        "user_id": user,
        "original_file_id": doc,
        "file_type": "txt",
        "source_filename": "tea.txt",
        "source_object_key": key,
        "md_object_key": f"parsed/{task_id}.md",
    }
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    return finished_run(client, task_id, SERVICE_TOKEN)


def test_model_configs_are_written_by_a_service_and_read_by_their_owner_only(
    client: TestClient, openai_embeddings_url: str
) -> None:
    secret = "sk-test-very-secret-0123456789"
    body = {  # an OpenAI-compatible endpoint that answers (the probe asks it once)
        "provider": "openai",
        "model": "multilingual-e5-small-q4",
        "dimension": 384,
        "base_url": openai_embeddings_url,
    }
    url = CONFIGS.format(user="1001")
    # a user token may not write, not even its own
    assert client.put(f"{url}/embedding", json=body, headers=bearer(ALICE_TOKEN)).status_code == 403
    response = client.put(
        f"{url}/embedding", json={**body, "api_key": secret}, headers=bearer(SERVICE_TOKEN)
    )
    assert response.status_code == 200, response.text
    assert response.json()["api_key_set"] is True and secret not in response.text
    chat = {"provider": "openai", "model": "gpt-4o-mini", "api_key": secret}
    response = client.put(f"{url}/chat", json=chat, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 200 and response.json()["dimension"] is None
    shown = client.get(url, headers=bearer(ALICE_TOKEN))
    assert shown.status_code == 200 and secret not in shown.text
    assert shown.json()["embedding"]["dimension"] == 384
    assert shown.json()["chat"]["model"] == "gpt-4o-mini"
    assert client.get(url, headers=bearer(BOB_TOKEN)).status_code == 404  # not Bob's
    assert client.get(url).status_code == 401
    # invalid input names the field; an unknown kind is refused
    response = client.put(
        f"{url}/embedding", json={**body, "dimension": 0}, headers=bearer(SERVICE_TOKEN)
    )
    assert response.status_code == 422 and "dimension" in response.text
    assert client.delete(f"{url}/vision", headers=bearer(SERVICE_TOKEN)).status_code == 422
    # delete: once true, then false
    deleted = client.delete(f"{url}/chat", headers=bearer(SERVICE_TOKEN))
    assert deleted.status_code == 200 and deleted.json() == {"deleted": True}
    assert client.delete(f"{url}/chat", headers=bearer(SERVICE_TOKEN)).json() == {"deleted": False}
    assert client.delete(f"{url}/chat", headers=bearer(ALICE_TOKEN)).status_code == 403
    assert client.get(url, headers=bearer(ALICE_TOKEN)).json()["chat"] is None


def test_a_document_is_listed_guarded_deleted_everywhere_and_hidden_from_others(
    client: TestClient,
) -> None:
    embedding = _default_embedding(client)
    url = CONFIGS.format(user="1001")
    response = client.put(f"{url}/embedding", json=embedding, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 200, response.text
    run = _index_a_text_file(client, 1001, "tea-1", 555)
    assert run["pipeline_status"] == "SUCCESS", run

    listing = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN))
    assert listing.status_code == 200, listing.text
    page = listing.json()
    assert page["total"] == 1 and page["documents"][0]["doc_id"] == "555"
    chunks = page["documents"][0]["chunks"]
    assert chunks["children"] > 0 and chunks["dense_indexed"] == chunks["children"]
    assert page["documents"][0]["latest_run"]["task_id"] == "tea-1"
    # Bob lists his own (empty) dataset whatever user_id he names
    bobs = client.get(
        "/api/v1/datasets/2001/documents?user_id=1001", headers=bearer(BOB_TOKEN)
    ).json()
    assert bobs["total"] == 0
    # runs listing: scoped by token, filtered by status
    runs = client.get("/api/v1/runs?status=SUCCESS", headers=bearer(ALICE_TOKEN)).json()
    assert [r["task_id"] for r in runs["runs"]] == ["tea-1"] and runs["total"] == 1
    assert client.get("/api/v1/runs?user_id=1001", headers=bearer(BOB_TOKEN)).json()["total"] == 0
    service = client.get("/api/v1/runs?user_id=1001&dataset_id=2001", headers=bearer(SERVICE_TOKEN))
    assert service.json()["total"] == 1
    assert client.get("/api/v1/runs?status=NOPE", headers=bearer(ALICE_TOKEN)).status_code == 422

    # the dimension guard: the user has vectors
    other = {**embedding, "dimension": embedding["dimension"] * 2}
    refused = client.put(f"{url}/embedding", json=other, headers=bearer(SERVICE_TOKEN))
    assert refused.status_code == 409, refused.text
    assert client.delete(f"{url}/embedding", headers=bearer(SERVICE_TOKEN)).status_code == 409

    # re-index from the stored Markdown: a new run of the same document
    doc = "/api/v1/documents/555"
    assert (
        client.post(f"{doc}/reindex?dataset_id=2001", headers=bearer(BOB_TOKEN)).status_code == 404
    )
    # the service stored it under its own bucket layout: not Alice's to name (security.md)
    refused = client.post(f"{doc}/reindex?dataset_id=2001", headers=bearer(ALICE_TOKEN))
    assert refused.status_code == 403, refused.text
    submitted = client.post(
        f"{doc}/reindex?dataset_id=2001&user_id=1001", headers=bearer(SERVICE_TOKEN)
    )
    assert submitted.status_code == 202, submitted.text
    assert submitted.json() == {"task_id": "tea-1-x1", "routing_key": "md"}
    reindexed = finished_run(client, "tea-1-x1", SERVICE_TOKEN)
    assert reindexed["pipeline_status"] == "SUCCESS", reindexed
    listing = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN)).json()
    assert listing["documents"][0]["latest_run"]["task_id"] == "tea-1-x1"
    assert listing["documents"][0]["chunks"] == page["documents"][0]["chunks"]

    hits = {"query": "green tea water", "user_id": 1001, "dataset_ids": [2001]}
    found = client.post("/api/v1/search", json=hits, headers=bearer(SERVICE_TOKEN)).json()
    assert found["hits"]

    # Bob cannot delete Alice's document (404), nor can a wrong dataset
    assert client.delete(f"{doc}?dataset_id=2001", headers=bearer(BOB_TOKEN)).status_code == 404
    assert client.delete(f"{doc}?dataset_id=9", headers=bearer(ALICE_TOKEN)).status_code == 404
    assert client.delete(doc, headers=bearer(ALICE_TOKEN)).status_code == 422  # no dataset_id
    deleted = client.delete(f"{doc}?dataset_id=2001", headers=bearer(ALICE_TOKEN))
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["chunks"] > 0 and deleted.json()["keyword_docs"] > 0
    assert deleted.json()["markdown_deleted"] is True
    assert client.delete(f"{doc}?dataset_id=2001", headers=bearer(ALICE_TOKEN)).status_code == 404
    listing = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN)).json()
    assert listing["total"] == 0
    found = client.post("/api/v1/search", json=hits, headers=bearer(SERVICE_TOKEN)).json()
    assert found["hits"] == []
    # the run stays as history
    assert client.get("/api/v1/runs/tea-1", headers=bearer(ALICE_TOKEN)).status_code == 200
    # nothing indexed any more: the guard lets the dimension change (no 409); the probe
    # still refuses a dimension the model does not return
    changed = client.put(f"{url}/embedding", json=other, headers=bearer(SERVICE_TOKEN))
    assert changed.status_code == 422, changed.text
    assert changed.json()["detail"].startswith(f"dimension: {other['dimension']} given")


def test_a_refused_retry_leaves_the_document_indexed_and_reindexable(client: TestClient) -> None:
    """Issue 19 item 4: a retry of a SUCCESS run is refused (an audit run of its own, the
    document's newest); the document is still shown as its index is, and re-indexes."""
    embedding = _default_embedding(client)
    url = CONFIGS.format(user="1001")
    response = client.put(f"{url}/embedding", json=embedding, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 200, response.text
    assert _index_a_text_file(client, 1001, "oolong-1", 12345)["pipeline_status"] == "SUCCESS"
    refused = client.post("/api/v1/runs/oolong-1/retry", headers=bearer(SERVICE_TOKEN))
    assert refused.status_code == 200, refused.text
    assert refused.json()["task_status"] == "failed"  # RETRY_VALIDATION_FAILED: not FAILED

    listing = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN)).json()
    [document] = listing["documents"]
    assert document["state"] == "SUCCESS"
    assert document["indexed_run"]["task_id"] == "oolong-1"
    assert document["latest_run"]["task_id"] == "oolong-1-r1"
    assert document["latest_run"]["pipeline_status"] == "FAILED"
    submitted = client.post(
        "/api/v1/documents/12345/reindex?dataset_id=2001&user_id=1001",
        headers=bearer(SERVICE_TOKEN),
    )
    assert submitted.status_code == 202, submitted.text
    assert submitted.json()["task_id"] == "oolong-1-x1"
    assert finished_run(client, "oolong-1-x1", SERVICE_TOKEN)["pipeline_status"] == "SUCCESS"
