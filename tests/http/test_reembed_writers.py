"""After a re-embedding swapped a user to generation 1 (issue 21), a metadata PUT relabels
the document's points there (a filtered dense search finds it by its new label, not its
old) and DELETE /documents/{id} removes them there: the HTTP API on the embedded container."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from ragline.application.health import obtain
from ragline.domain.metadata import Eq
from tests.http.conftest import SERVICE_TOKEN, bearer
from tests.http.test_documents_and_model_configs import (
    CONFIGS,
    _default_embedding,
    _index_a_text_file,
)

QUERY = "green tea water"


def test_metadata_and_delete_reach_the_swapped_generation(
    client: TestClient, openai_embeddings_url: str
) -> None:
    url = CONFIGS.format(user="1001")
    embedding = _default_embedding(client)
    assert client.put(f"{url}/embedding", json=embedding, headers=bearer(SERVICE_TOKEN)).is_success
    assert _index_a_text_file(client, 1001, "tea-w1", 557)["pipeline_status"] == "SUCCESS"
    other = {
        "provider": "openai",
        "model": "multilingual-e5-small-q4",
        "dimension": 384,
        "base_url": openai_embeddings_url,
        "api_key": "sk-reembed-secret-0123",
        "reembed": True,
    }
    planned = client.put(f"{url}/embedding", json=other, headers=bearer(SERVICE_TOKEN))
    assert planned.status_code == 202, planned.text
    rid = planned.json()["reembedding_id"]
    container = client.app.state.container  # type: ignore[attr-defined]

    async def drive() -> str:
        use = await obtain(container.reembeddings)
        while await use.step("test-worker", datetime.now(UTC)):
            pass
        return (await use.get(rid, "1001")).status.value

    assert asyncio.run(drive()) == "SWAPPED"

    async def dense(label: str) -> list[str]:
        search = await obtain(container.hybrid_search)
        [trace] = await search.trace_many([QUERY], "1001", "2001", 5, Eq("team", label))
        assert trace.degraded == ()
        return [hit.chunk_id for hit in trace.rankings["dense"]]

    put = "/api/v1/documents/557/metadata?dataset_id=2001&user_id=1001"
    for label in ("red", "blue"):
        answer = client.put(put, json={"metadata": {"team": label}}, headers=bearer(SERVICE_TOKEN))
        assert answer.status_code == 200, answer.text
    assert asyncio.run(dense("blue"))
    assert asyncio.run(dense("red")) == []
    gone = client.delete(
        "/api/v1/documents/557?dataset_id=2001&user_id=1001", headers=bearer(SERVICE_TOKEN)
    )
    assert gone.status_code == 200, gone.text
    assert asyncio.run(dense("blue")) == []
