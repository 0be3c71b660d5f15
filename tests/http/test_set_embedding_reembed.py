"""PUT .../model-configs/embedding while the user has vectors (issue 21): another model is 409
saying to pass `reembed`; with `"reembed": true` it is 202 with the re-embedding's id and its
Location, the default config unchanged until the swap; a second one while it runs is 409."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from ragline.application.health import obtain
from ragline.domain.reembedding import TERMINAL_REEMBEDDING
from tests.http.conftest import SERVICE_TOKEN, bearer
from tests.http.test_documents_and_model_configs import (
    CONFIGS,
    _default_embedding,
    _index_a_text_file,
)


def test_another_model_is_a_planned_reembedding(
    client: TestClient, openai_embeddings_url: str
) -> None:
    url = CONFIGS.format(user="1001")
    embedding = _default_embedding(client)
    assert client.put(f"{url}/embedding", json=embedding, headers=bearer(SERVICE_TOKEN)).is_success
    assert _index_a_text_file(client, 1001, "tea-1", 555)["pipeline_status"] == "SUCCESS"
    other = {
        "provider": "openai",
        "model": "multilingual-e5-small-q4",
        "dimension": 384,
        "base_url": openai_embeddings_url,
        "api_key": "sk-reembed-secret-0123",
    }
    refused = client.put(f"{url}/embedding", json=other, headers=bearer(SERVICE_TOKEN))
    assert refused.status_code == 409, refused.text
    assert '"reembed": true' in refused.json()["detail"]
    planned = client.put(
        f"{url}/embedding", json={**other, "reembed": True}, headers=bearer(SERVICE_TOKEN)
    )
    assert planned.status_code == 202, planned.text
    body = planned.json()
    assert body["status"] == "PLANNED" and set(body) == {"reembedding_id", "status"}
    assert planned.headers["location"] == f"/api/v1/reembeddings/{body['reembedding_id']}"
    assert "sk-reembed-secret" not in planned.text
    shown = client.get(url, headers=bearer(SERVICE_TOKEN)).json()["embedding"]
    assert (shown["provider"], shown["model"]) == (embedding["provider"], embedding["model"])
    again = client.put(
        f"{url}/embedding", json={**other, "reembed": True}, headers=bearer(SERVICE_TOKEN)
    )
    assert again.status_code == 409 and "already re-embedding" in again.json()["detail"]
    # the same model as now (reembed or not) is stored at once
    same = client.put(
        f"{url}/embedding", json={**embedding, "reembed": True}, headers=bearer(SERVICE_TOKEN)
    )
    assert same.status_code == 200, same.text

    # a worker's steps copy and swap (the loops that run them are `ragline worker`/`serve`'s)
    container = client.app.state.container  # type: ignore[attr-defined]

    async def drive() -> tuple[str, int]:
        # The server's own re-embedding loop steps too: a step finding the batch in its hands
        # has nothing to do, so step (or let it finish) until the re-embedding has ended.
        use = await obtain(container.reembeddings)
        for _ in range(5000):
            worked = await use.step("test-worker", datetime.now(UTC))
            item = await use.get(body["reembedding_id"], "1001")
            if item.status in TERMINAL_REEMBEDDING:
                break
            if not worked:
                await asyncio.sleep(0.01)
        return item.status.value, item.target_generation

    assert asyncio.run(drive()) == ("SWAPPED", 1)
    shown = client.get(url, headers=bearer(SERVICE_TOKEN)).json()["embedding"]
    assert (shown["provider"], shown["base_url"]) == ("openai", openai_embeddings_url)
    assert shown["api_key_set"] is True
    query = {"query": "green tea water", "user_id": 1001, "dataset_ids": [2001]}
    found = client.post("/api/v1/search", json=query, headers=bearer(SERVICE_TOKEN)).json()
    assert found["hits"] and found["degraded"] == [], found

    async def dense_ranking() -> list[str]:
        search = await obtain(container.hybrid_search)
        [trace] = await search.trace_many(["green tea water"], "1001", "2001", 5)
        return [hit.chunk_id for hit in trace.rankings["dense"]]

    assert asyncio.run(dense_ranking())  # from generation 1: generation 0's were swept
