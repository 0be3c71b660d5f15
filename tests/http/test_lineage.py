"""A re-upload replaces a document only when the new run succeeds (docs/operations.md,
"Re-uploading a document"): a new version that fails AFTER CHUNKING (the keyword index
refuses its writes) leaves the old one answering in all three retrievers; a new version that
succeeds replaces it, the old lineage leaving each index in one delete call.

The indexes are real adapters (embedded vectors + Tantivy; Qdrant local + Elasticsearch),
wrapped only to refuse writes on demand and to count delete calls, as campaigns/faults does
with its gates.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from dependency_injector import providers
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.application.ports.keyword_index import KeywordDoc, KeywordIndexUnavailable
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.search.use_case import HybridSearch
from ragline.bootstrap import factories
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from ragline.bootstrap.settings import Settings
from ragline.bootstrap.vendor_settings import ElasticsearchSettings
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, TOKENS, bearer, finished_run

OLD = b"# Notes\n\n## Tea\n\nGreen tea is brewed at 80 degrees for two minutes.\n"
NEW = b"# Notes\n\n## Rocks\n\nBasalt columns form when thick lava cools slowly.\n"
URL = "/api/v1/datasets/2001/documents"
RETRIEVERS = ("dense", "sparse", "bm25")


@attrs.define
class Deletes:
    """Delete calls seen per index (`delete_chunks`, `retire_chunks`, `delete_document`)."""

    calls: list[tuple[str, str, int]] = attrs.Factory(list)  # (index, method, ids)
    refusing: bool = False  # the keyword index refuses writes (an outage)


class Watched:
    """The real index, counting deletes; the keyword one refuses writes on demand."""

    def __init__(self, inner: Any, name: str, seen: Deletes) -> None:
        self._inner, self._name, self._seen = inner, name, seen

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        if self._seen.refusing:
            raise KeywordIndexUnavailable("the index refuses writes (test fault)")
        await self._inner.write(docs)

    async def delete_chunks(self, user_id: str, dataset_id: str, ids: Sequence[str]) -> None:
        self._seen.calls.append((self._name, "delete_chunks", len(ids)))
        await self._inner.delete_chunks(user_id, dataset_id, ids)

    async def retire_chunks(self, user_id: str, dataset_id: str, ids: Sequence[str]) -> None:
        self._seen.calls.append((self._name, "retire_chunks", len(ids)))
        await self._inner.retire_chunks(user_id, dataset_id, ids)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> Any:
        self._seen.calls.append((self._name, "delete_document", 0))
        return await self._inner.delete_document(user_id, dataset_id, doc_id)


async def _watched_vectors(settings: Settings, seen: Deletes) -> AsyncIterator[Any]:
    async for index in factories.vector_index(settings):
        yield Watched(index, "vectors", seen)


async def _watched_keywords(settings: Settings, seen: Deletes) -> AsyncIterator[Any]:
    async for index in factories.keyword_index(settings):
        yield Watched(index, "keywords", seen)


@pytest.fixture
def seen() -> Deletes:
    return Deletes()


@pytest.fixture(params=["embedded", "qdrant+elasticsearch"])
def client(request: pytest.FixtureRequest, tmp_path: Path, seen: Deletes) -> Iterator[TestClient]:
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
    watched = providers.Object(seen)
    container.vectors.override(providers.Resource(_watched_vectors, container.settings, watched))
    container.keywords.override(providers.Resource(_watched_keywords, container.settings, watched))
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container
    with TestClient(app) as test_client:
        embedding = container.default_embedding()
        body = {"provider": embedding.provider, "model": embedding.model}
        answer = test_client.put(
            "/api/v1/users/1001/model-configs/embedding",
            json=body | {"dimension": embedding.dimension},
            headers=bearer(SERVICE_TOKEN),
        )
        assert answer.status_code == 200, answer.text
        yield test_client


def _upload(client: TestClient, data: bytes, **form: str) -> dict[str, Any]:
    answer = client.post(
        URL, files={"file": ("notes.md", data)}, data=form, headers=bearer(ALICE_TOKEN)
    )
    assert answer.status_code == 202, answer.text
    body: dict[str, Any] = answer.json()
    body["run"] = finished_run(client, body["task_id"], ALICE_TOKEN)
    return body


def _ranked(client: TestClient, query: str) -> dict[str, list[str]]:
    """Each retriever's hydrated candidates' texts for `query`, as `--explain` sees them."""
    container = client.app.state.container  # type: ignore[attr-defined]

    async def trace() -> dict[str, list[str]]:
        search: HybridSearch = await container.hybrid_search()
        [found] = await search.trace_many([query], "1001", "2001", 5)
        return {name: [h.text for h in found.rankings[name]] for name in RETRIEVERS}

    ranked: dict[str, list[str]] = client.portal.call(trace)  # type: ignore[union-attr]
    return ranked


def _still_held(client: TestClient, doc_id: str, ids: Sequence[str]) -> set[str]:
    """Which of `ids` the keyword index or the chunk table (any lineage) still holds: raw
    reads, not hydrated ones."""
    container = client.app.state.container  # type: ignore[attr-defined]
    words = ["green", "tea", "brewed", "degrees", "basalt", "lava", "notes"]

    async def look() -> set[str]:
        keywords = await container.keywords()
        found = {h.chunk_id for h in await keywords.search("1001", "2001", words, 100)}
        async with (await container.uow_factory())() as uow:
            rows = await uow.chunks.list_document(DocumentScope("1001", "2001", doc_id))
        return (found | {r.chunk_id for r in rows}) & set(ids)

    held: set[str] = client.portal.call(look)  # type: ignore[union-attr]
    return held


def _retired(client: TestClient, doc_id: str, ids: Sequence[str]) -> set[str]:
    """`_still_held` once the keyword index's deferred retire has committed (Tantivy's timer
    commits it within 2 s); waits on the outcome, up to 60 s."""
    for _ in range(600):
        held = _still_held(client, doc_id, ids)
        if not held:
            return held
        time.sleep(0.1)
    return _still_held(client, doc_id, ids)


def _child_ids(client: TestClient, doc_id: str) -> list[str]:
    answer = client.get(
        f"/api/v1/documents/{doc_id}/chunks",
        params={"dataset_id": "2001"},
        headers=bearer(ALICE_TOKEN),
    )
    assert answer.status_code == 200, answer.text
    return [c["chunk_id"] for f in answer.json()["parents"] for c in f["children"]]


def _answers(client: TestClient, query: str, needle: str) -> set[str]:
    """The retrievers whose candidates for `query` include a text with `needle`."""
    return {
        name for name, texts in _ranked(client, query).items() if any(needle in t for t in texts)
    }


def test_a_version_failing_after_chunking_leaves_the_old_one_answering(
    client: TestClient, seen: Deletes
) -> None:
    first = _upload(client, OLD)
    assert first["run"]["pipeline_status"] == "SUCCESS", first["run"]
    doc = first["doc_id"]
    old_ids = _child_ids(client, doc)
    assert _answers(client, "green tea brewing temperature", "80 degrees") == set(RETRIEVERS)

    seen.refusing, seen.calls[:] = True, []
    broken = _upload(client, NEW, doc_id=doc)
    run = broken["run"]
    assert run["pipeline_status"] == "FAILED", run
    stages = {s["stage"]: s["status"] for s in run["stages"]}
    assert stages["CHUNKING"] == "SUCCESS" and stages["VECTORIZING"] == "SUCCESS", stages
    assert run["failure_reason"].startswith("KEYWORD_INDEX_UNAVAILABLE"), run
    # the new lineage's rows and dense vectors exist, but nothing of it answers
    assert _answers(client, "green tea brewing temperature", "80 degrees") == set(RETRIEVERS)
    assert _answers(client, "basalt lava columns", "Basalt") == set()
    assert _child_ids(client, doc) == old_ids
    listing = client.get(URL, headers=bearer(ALICE_TOKEN)).json()
    [document] = listing["documents"]
    assert document["indexed_run"]["task_id"] == first["task_id"]
    assert not [c for c in seen.calls if c[1] == "delete_document"]  # the old one stays

    seen.refusing, seen.calls[:] = False, []
    fixed = _upload(client, NEW, doc_id=doc)
    assert fixed["run"]["pipeline_status"] == "SUCCESS", fixed["run"]
    new_ids = _child_ids(client, doc)
    assert new_ids and not set(new_ids) & set(old_ids)
    assert _answers(client, "basalt lava columns", "Basalt") == set(RETRIEVERS)
    assert _answers(client, "green tea brewing temperature", "80 degrees") == set()
    # the swap: every older lineage (the live one and the failed one) in ONE call per index
    # (the keyword index's retire rides its next commit)
    assert sorted((i, m) for i, m, _ in seen.calls) == [
        ("keywords", "retire_chunks"),
        ("vectors", "delete_chunks"),
    ], seen.calls
    # the old live lineage's children and the failed one's (the same text as the new)
    assert all(n == len(old_ids) + len(new_ids) for _, _, n in seen.calls), seen.calls
    assert _retired(client, doc, old_ids) == set()
