"""Document metadata over HTTP on the real embedded container: given at submit, replaced
with PUT /api/v1/documents/{doc_id}/metadata, applied inside every retriever by the search
body's `filter`; another tenant's document is not found and never matched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, bearer, finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
TEXTS = {
    555: "Green tea is brewed with water at about 80 degrees.\n\nBlack tea wants boiling water.\n",
    556: "Oolong tea is brewed with water at about 90 degrees.\n\nWhite tea likes it cooler.\n",
}


def _index(client: TestClient, doc: int, metadata: dict[str, Any] | None) -> None:
    task_id = f"meta-{doc}"
    key = f"raw/{task_id}.txt"
    storage = client.app.state.container.storage()  # type: ignore[attr-defined]

    async def upload() -> None:
        await storage.ensure_bucket(SEED_TASK["source_bucket"])
        await storage.put_bytes(SEED_TASK["source_bucket"], key, TEXTS[doc].encode())

    asyncio.run(upload())
    task = {
        **SEED_TASK,
        "task_id": task_id,
        "original_file_id": doc,
        "file_type": "txt",
        "source_filename": f"tea-{doc}.txt",
        "source_object_key": key,
        "md_object_key": f"parsed/{task_id}.md",
    }
    if metadata is not None:
        task["metadata"] = metadata
    answer = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert answer.status_code == 202, answer.text
    assert finished_run(client, task_id, SERVICE_TOKEN)["pipeline_status"] == "SUCCESS"


def _docs(client: TestClient, token: str, where: dict[str, Any] | None) -> set[str]:
    body: dict[str, Any] = {"query": "tea brewed with water", "dataset_ids": [2001], "top_k": 10}
    if where is not None:
        body["filter"] = where
    answer = client.post("/api/v1/search", json=body, headers=bearer(token))
    assert answer.status_code == 200, answer.text
    return {hit["doc_id"] for hit in answer.json()["hits"]}


def test_metadata_from_submit_and_put_filters_every_retriever(client: TestClient) -> None:
    default = client.app.state.container.default_embedding()  # type: ignore[attr-defined]
    config = {"provider": default.provider, "model": default.model, "dimension": default.dimension}
    url = "/api/v1/users/1001/model-configs/embedding"
    assert client.put(url, json=config, headers=bearer(SERVICE_TOKEN)).status_code == 200
    _index(client, 555, {"author": "Ann", "year": 2019, "published": {"date": "2019-03-01"}})
    _index(client, 556, None)

    assert _docs(client, ALICE_TOKEN, None) == {"555", "556"}
    assert _docs(client, ALICE_TOKEN, {"eq": {"author": "Ann"}}) == {"555"}
    assert _docs(client, ALICE_TOKEN, {"exists": "author"}) == {"555"}
    assert _docs(client, ALICE_TOKEN, {"range": {"published": {"lt": "2020-01-01"}}}) == {"555"}
    assert _docs(client, ALICE_TOKEN, {"eq": {"author": "Bob"}}) == set()

    put = "/api/v1/documents/556/metadata?dataset_id=2001"
    labels = {"author": "Bob", "year": 2021, "tags": ["oolong", "white"]}
    answer = client.put(put, json={"metadata": labels}, headers=bearer(ALICE_TOKEN))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"doc_id": "556", "metadata": labels, "version": 1}
    assert _docs(client, ALICE_TOKEN, {"range": {"year": {"gte": 2020}}}) == {"556"}
    assert _docs(client, ALICE_TOKEN, {"in": {"tags": ["white", "green"]}}) == {"556"}
    both = {"or": [{"eq": {"author": "Ann"}}, {"eq": {"tags": "oolong"}}]}
    assert _docs(client, ALICE_TOKEN, both) == {"555", "556"}
    neither = {"and": [{"eq": {"author": "Ann"}}, {"eq": {"tags": "oolong"}}]}
    assert _docs(client, ALICE_TOKEN, neither) == set()
    # a PUT replaces the whole set: tags gone, version 2
    again = client.put(put, json={"metadata": {"author": "Bob"}}, headers=bearer(ALICE_TOKEN))
    assert again.status_code == 200 and again.json()["version"] == 2
    assert _docs(client, ALICE_TOKEN, {"exists": "tags"}) == set()
    # a re-index keeps the stored metadata (the task's own is not applied again)
    reindex = client.post(
        "/api/v1/documents/555/reindex?dataset_id=2001&user_id=1001",
        headers=bearer(SERVICE_TOKEN),
    )
    assert reindex.status_code == 202, reindex.text
    finished_run(client, reindex.json()["task_id"], SERVICE_TOKEN)
    assert _docs(client, ALICE_TOKEN, {"eq": {"author": "Ann"}}) == {"555"}

    # Bob: Alice's document is not found, and his filtered search sees nothing of hers
    bobs = client.put(
        "/api/v1/documents/555/metadata?dataset_id=2001&user_id=1001",
        json={"metadata": {"author": "Bob"}},
        headers=bearer(BOB_TOKEN),
    )
    assert bobs.status_code == 404, bobs.text
    assert _docs(client, BOB_TOKEN, {"exists": "author"}) == set()
    assert _docs(client, ALICE_TOKEN, {"eq": {"author": "Ann"}}) == {"555"}
    missing = client.put(
        "/api/v1/documents/999/metadata?dataset_id=2001",
        json={"metadata": {}},
        headers=bearer(ALICE_TOKEN),
    )
    assert missing.status_code == 404

    # malformed metadata and filters are 422 problems
    for bad in ({"Bad": 1}, {"x": True}, {"x": {"date": "soon"}}, {"x": "y" * 300}):
        answer = client.put(put, json={"metadata": bad}, headers=bearer(ALICE_TOKEN))
        assert answer.status_code == 422, (bad, answer.text)
    for bad_filter in ({"eq": {"a": 1}, "in": {"a": ["x"]}}, {"near": {"a": 1}}, {"exists": 3}):
        body = {"query": "tea", "dataset_ids": [2001], "filter": bad_filter}
        answer = client.post("/api/v1/search", json=body, headers=bearer(ALICE_TOKEN))
        assert answer.status_code == 422, (bad_filter, answer.text)


def test_the_new_endpoint_and_fields_are_in_the_openapi_document(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    put = spec["paths"]["/api/v1/documents/{doc_id}/metadata"]["put"]
    assert put["responses"]["200"] and put["responses"]["404"]
    body = json.dumps(spec["components"]["schemas"]["MetadataBody"])
    assert "Ann" in body  # the example
    search = spec["components"]["schemas"]["SearchRequest"]["properties"]["filter"]
    assert search["examples"] and "range" in search["description"]
