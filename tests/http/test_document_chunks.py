"""A document's chunks over HTTP on a real container (SQLite and the bundled model, with the
embedded vector index and Tantivy, or Qdrant local mode and Elasticsearch): listed as
parents with children, a child's text replaced is
found by its new text and not its old in the dense, sparse and BM25 retrievers, a disabled
chunk is returned by none of them and comes back when enabled, and another tenant gets 404
with nothing changed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.application.search.use_case import HybridSearch
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from ragline.bootstrap.vendor_settings import ElasticsearchSettings
from tests.http.conftest import (
    ALICE_TOKEN,
    BOB_TOKEN,
    SERVICE_TOKEN,
    TOKENS,
    bearer,
    finished_run,
)

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
MARKDOWN = """# Household notes

## Green tea

Green tea is brewed with water at about 80 degrees for two minutes; boiling water makes
green tea bitter, so let the kettle cool first.

## Black tea

Black tea wants water at a full boil and steeps for four minutes before milk is added.

## Bicycle care

Oil the bicycle chain every month and check the tyre pressure before a long ride.
"""
NEW_TEXT = "Basalt columns form when thick lava flows cool slowly and crack into hexagons."
RETRIEVERS = ("dense", "sparse", "bm25")


@pytest.fixture(params=["embedded", "qdrant+elasticsearch"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    vendors: dict[str, object] = {}
    if request.param != "embedded":
        url = request.getfixturevalue("elasticsearch_url")
        index = f"chunks_{uuid.uuid4().hex[:12]}"  # the server is shared by the session
        vendors = {
            "vector_index": "qdrant",
            "keyword_index": "elasticsearch",
            "elasticsearch": ElasticsearchSettings(url=url, index=index),
        }
    container = container_for(tmp_path / "data", **vendors)
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container
    with TestClient(app) as test_client:
        yield test_client


def _index(client: TestClient) -> None:
    container = client.app.state.container  # type: ignore[attr-defined]
    default = container.default_embedding()
    embedding = {
        "provider": default.provider,
        "model": default.model,
        "dimension": default.dimension,
    }
    url = "/api/v1/users/1001/model-configs/embedding"
    assert client.put(url, json=embedding, headers=bearer(SERVICE_TOKEN)).status_code == 200
    storage = container.storage()
    key = "raw/notes.md"

    async def upload() -> None:
        await storage.ensure_bucket(SEED_TASK["source_bucket"])
        await storage.put_bytes(SEED_TASK["source_bucket"], key, MARKDOWN.encode())

    client.portal.call(upload)  # type: ignore[union-attr]
    task = {
        **SEED_TASK,
        "task_id": "notes-1",
        "user_id": 1001,
        "original_file_id": 777,
        "file_type": "md",
        "source_filename": "notes.md",
        "source_object_key": key,
        "md_object_key": key,
    }
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    assert finished_run(client, "notes-1", SERVICE_TOKEN)["pipeline_status"] == "SUCCESS"


def _ranked(client: TestClient, query: str) -> dict[str, list[str]]:
    """Each retriever's candidate chunk ids for `query` (best first), as `--explain` sees them."""
    container = client.app.state.container  # type: ignore[attr-defined]

    async def trace() -> dict[str, list[str]]:
        search: HybridSearch = await container.hybrid_search()
        [found] = await search.trace_many([query], "1001", "2001", 5)
        return {name: [h.chunk_id for h in found.rankings[name]] for name in RETRIEVERS}

    ranked: dict[str, list[str]] = client.portal.call(trace)  # type: ignore[union-attr]
    return ranked


def _chunks(client: TestClient, token: str = ALICE_TOKEN, **query: Any) -> Any:
    params = {"dataset_id": "2001", **query}
    return client.get("/api/v1/documents/777/chunks", params=params, headers=bearer(token))


def _patch(
    client: TestClient, chunk_id: str, body: dict[str, Any], token: str = ALICE_TOKEN
) -> Any:
    return client.patch(
        f"/api/v1/documents/777/chunks/{chunk_id}?dataset_id=2001", json=body, headers=bearer(token)
    )


def test_list_edit_disable_and_enable_a_chunk(client: TestClient) -> None:
    _index(client)
    listing = _chunks(client)
    assert listing.status_code == 200, listing.text
    page = listing.json()
    families = page["parents"]
    children = [c for f in families for c in f["children"]]
    assert children and all(
        c["parent_id"] == f["parent"]["chunk_id"] for f in families for c in f["children"]
    )
    assert all(c["dense_status"] == c["sparse_status"] == "SUCCESS" for c in children)
    green = next(c for c in children if "80 degrees" in c["text"])
    assert green["section_path"][-1] == "Green tea" and green["span_end"] > green["span_start"]
    # paging: one parent a page, the cursor walks them all
    first = _chunks(client, limit=1).json()
    assert len(first["parents"]) == 1 and first["next_cursor"] is not None
    rest = _chunks(client, limit=100, cursor=first["next_cursor"]).json()
    assert len(first["parents"]) + len(rest["parents"]) == len(families)

    old_query = "green tea brewed at 80 degrees"
    assert all(_ranked(client, old_query)[name][0] == green["chunk_id"] for name in RETRIEVERS)

    # another tenant: 404 and nothing changed
    assert _chunks(client, BOB_TOKEN).status_code == 404
    assert _patch(client, green["chunk_id"], {"text": NEW_TEXT}, BOB_TOKEN).status_code == 404
    assert _patch(client, green["chunk_id"], {"enabled": False}, BOB_TOKEN).status_code == 404
    assert all(_ranked(client, old_query)[name][0] == green["chunk_id"] for name in RETRIEVERS)

    # a new text: found by it in all three retrievers, and not by the old one
    edited = _patch(client, green["chunk_id"], {"text": NEW_TEXT})
    assert edited.status_code == 200, edited.text
    assert edited.json()["edited"] is True and edited.json()["text"] == NEW_TEXT
    assert edited.json()["dense_status"] == edited.json()["sparse_status"] == "SUCCESS"
    new = _ranked(client, "basalt columns lava hexagons")
    assert all(new[name][0] == green["chunk_id"] for name in RETRIEVERS), new
    old = _ranked(client, old_query)
    assert green["chunk_id"] not in old["sparse"] and green["chunk_id"] not in old["bm25"]
    assert old["dense"][0] != green["chunk_id"], old
    # a parent's text is not edited
    parent = families[0]["parent"]["chunk_id"]
    assert _patch(client, parent, {"text": "x"}).status_code == 422

    # disabled: no retriever returns it; enabled: back in all three
    off = _patch(client, green["chunk_id"], {"enabled": False})
    assert off.status_code == 200 and off.json()["enabled"] is False
    gone = _ranked(client, "basalt columns lava hexagons")
    assert all(green["chunk_id"] not in gone[name] for name in RETRIEVERS), gone
    assert _patch(client, green["chunk_id"], {"enabled": False}).status_code == 200  # a repeat
    on = _patch(client, green["chunk_id"], {"enabled": True})
    assert on.status_code == 200 and on.json()["enabled"] is True
    back = _ranked(client, "basalt columns lava hexagons")
    assert all(back[name][0] == green["chunk_id"] for name in RETRIEVERS), back
    assert _chunks(client).json()["parents"] == [
        {
            **f,
            "children": [
                on.json() if c["chunk_id"] == green["chunk_id"] else c for c in f["children"]
            ],
        }
        for f in families
    ]
    assert _patch(client, "no-such-chunk", {"enabled": False}).status_code == 404
    assert _patch(client, green["chunk_id"], {}).status_code == 422
