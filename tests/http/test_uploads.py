"""Uploads over HTTP on the real embedded container: the bytes land under the caller's own
prefix with a key ragline chooses, the ordinary parse task runs, an Idempotency-Key replays
the first answer (other bytes: 422), the size bound is 413 with nothing stored, the type is
sniffed from the bytes (415), and a re-upload that fails leaves the old version answering."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.application.ports.messaging import MessageBusError
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, TOKENS, bearer, finished_run

NOTES = b"# Notes\n\n## Tea\n\nGreen tea is brewed at 80 degrees for two minutes.\n"
NEW_NOTES = b"# Notes\n\n## Rocks\n\nBasalt columns form when thick lava cools slowly.\n"
URL = "/api/v1/datasets/2001/documents"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    container = container_for(tmp_path / "data", upload_max_mb=1)
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container
    with TestClient(app) as test_client:
        embedding = container.default_embedding()
        body = {
            "provider": embedding.provider,
            "model": embedding.model,
            "dimension": embedding.dimension,
        }
        for user in ("1001", "2002"):
            answer = test_client.put(
                f"/api/v1/users/{user}/model-configs/embedding",
                json=body,
                headers=bearer(SERVICE_TOKEN),
            )
            assert answer.status_code == 200, answer.text
        yield test_client


def _objects(tmp_path: Path) -> list[str]:
    """Every object stored in the buckets uploads write (not ragline's parse cache)."""
    root = tmp_path / "data" / "objects"
    found = (str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    return sorted(o for o in found if o.startswith(("sources/", "markdown/")))


def _upload(
    client: TestClient,
    name: str,
    data: bytes,
    token: str = ALICE_TOKEN,
    key: str | None = None,
    **form: str,
) -> Any:
    headers = bearer(token) | ({"Idempotency-Key": key} if key else {})
    return client.post(URL, files={"file": (name, data)}, data=form, headers=headers)


def _search(client: TestClient, query: str) -> list[str]:
    body = {"query": query, "dataset_ids": [2001], "top_k": 5}
    found = client.post("/api/v1/search", json=body, headers=bearer(ALICE_TOKEN))
    assert found.status_code == 200, found.text
    return [h["text"] for h in found.json()["hits"]]


def test_an_upload_lands_under_the_callers_prefix_and_runs(
    client: TestClient, tmp_path: Path
) -> None:
    # Alice names Bob's user: a user token acts for itself whatever it says
    answer = _upload(client, "../../etc/notes.md", NOTES, user_id="2002")
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert answer.headers["Location"] == body["run"] == f"/api/v1/runs/{body['task_id']}"
    assert body["file_type"] == "md" and body["replayed"] is False
    assert body["source_object_key"].startswith("1001/uploads/2001/")
    run = finished_run(client, body["task_id"], ALICE_TOKEN)
    assert run["pipeline_status"] == "SUCCESS", run
    assert all(o.split("/", 2)[1] == "1001" for o in _objects(tmp_path)), _objects(tmp_path)
    assert any("80 degrees" in t for t in _search(client, "green tea temperature"))
    # the document is Alice's: Bob does not see its chunks
    chunks = f"/api/v1/documents/{body['doc_id']}/chunks?dataset_id=2001"
    assert client.get(chunks, headers=bearer(ALICE_TOKEN)).status_code == 200
    assert client.get(chunks, headers=bearer(BOB_TOKEN)).status_code == 404
    # a service token must name the user
    assert _upload(client, "notes.md", NOTES, SERVICE_TOKEN).status_code == 422


def test_the_idempotency_key_replays_the_first_answer(client: TestClient) -> None:
    first = _upload(client, "notes.md", NOTES, key="k-1")
    assert first.status_code == 202, first.text
    again = _upload(client, "notes.md", NOTES, key="k-1")
    assert again.status_code == 202
    assert {**again.json(), "replayed": False} == first.json() and again.json()["replayed"]
    assert (
        finished_run(client, first.json()["task_id"], ALICE_TOKEN)["pipeline_status"] == "SUCCESS"
    )
    third = _upload(client, "notes.md", NOTES, key="k-1")
    assert third.json()["task_id"] == first.json()["task_id"]
    runs = client.get("/api/v1/runs", headers=bearer(ALICE_TOKEN)).json()
    assert runs["total"] == 1  # no second task
    other = _upload(client, "notes.md", NEW_NOTES, key="k-1")
    assert other.status_code == 422 and "Idempotency-Key" in other.json()["detail"]
    # another user's same key is another upload
    bobs = _upload(client, "notes.md", NOTES, BOB_TOKEN, key="k-1")
    assert bobs.status_code == 202 and bobs.json()["task_id"] != first.json()["task_id"]
    assert bobs.json()["source_object_key"].startswith("2002/uploads/")


def test_the_size_bound_leaves_nothing_behind(client: TestClient, tmp_path: Path) -> None:
    big = b"a" * (1024 * 1024 + 1)
    answer = _upload(client, "big.txt", big)
    assert answer.status_code == 413, answer.text
    assert "1048576" in answer.json()["detail"]
    assert _objects(tmp_path) == []
    assert client.get("/api/v1/runs", headers=bearer(ALICE_TOKEN)).json()["total"] == 0


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("report.txt", b"%PDF-1.7\n%binary", "the bytes are pdf, the name says txt"),
        ("report.pdf", b"just some text\n", "text bytes, but the name says pdf"),
        ("report.docx", _zip({"hello.txt": b"hi"}), "not a docx, xlsx, pptx or epub"),
        ("report.xlsx", _zip({"word/document.xml": b"<w/>"}), "the bytes are docx"),
        ("report.doc", bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 64, "OLE compound file"),
        ("blob.bin", b"\x00\x01\x02\x03" * 20, "binary bytes"),
        ("notes", b"plain words\n", "the name has no extension"),
        ("empty.md", b"", "the file is empty"),
    ],
)
def test_the_type_is_sniffed_from_the_bytes(
    client: TestClient, tmp_path: Path, name: str, data: bytes, says: str
) -> None:
    answer = _upload(client, name, data)
    assert answer.status_code == 415, answer.text
    assert says in answer.json()["detail"]
    assert _objects(tmp_path) == []


def test_a_failing_new_version_leaves_the_old_one_answering(client: TestClient) -> None:
    first = _upload(client, "notes.md", NOTES)
    doc = first.json()["doc_id"]
    assert (
        finished_run(client, first.json()["task_id"], ALICE_TOKEN)["pipeline_status"] == "SUCCESS"
    )
    # a new version whose bytes are a PDF that no parser can read: it fails while parsing
    broken = _upload(client, "notes.pdf", b"%PDF-1.7\n" + b"\x8f" * 200, doc_id=doc)
    assert broken.status_code == 202, broken.text
    run = finished_run(client, broken.json()["task_id"], ALICE_TOKEN)
    assert run["pipeline_status"] == "FAILED", run
    assert any("80 degrees" in t for t in _search(client, "green tea temperature"))
    listing = client.get("/api/v1/datasets/2001/documents", headers=bearer(ALICE_TOKEN)).json()
    [document] = listing["documents"]
    assert document["state"] == "SUCCESS"
    assert document["indexed_run"]["task_id"] == first.json()["task_id"]
    # a new version that succeeds replaces it
    fixed = _upload(client, "notes.md", NEW_NOTES, doc_id=doc)
    run = finished_run(client, fixed.json()["task_id"], ALICE_TOKEN)
    assert run["pipeline_status"] == "SUCCESS", run
    texts = _search(client, "basalt lava green tea")
    assert any("Basalt" in t for t in texts) and not any("80 degrees" in t for t in texts)


def _filtered(client: TestClient, query: str, where: dict[str, Any]) -> list[str]:
    body = {"query": query, "dataset_ids": [2001], "top_k": 5, "filter": where}
    found = client.post("/api/v1/search", json=body, headers=bearer(ALICE_TOKEN))
    assert found.status_code == 200, found.text
    return [h["text"] for h in found.json()["hits"]]


def test_an_uploads_metadata_labels_every_index(client: TestClient, tmp_path: Path) -> None:
    labels = {"author": "Ann", "year": 2021, "published": {"date": "2024-05-01"}}
    tea = _upload(client, "tea.md", NOTES, metadata=json.dumps(labels))
    assert tea.status_code == 202, tea.text
    rocks = _upload(client, "rocks.md", NEW_NOTES, metadata=json.dumps({"author": "Bob"}))
    for answer in (tea, rocks):
        run = finished_run(client, answer.json()["task_id"], ALICE_TOKEN)
        assert run["pipeline_status"] == "SUCCESS", run
    anns = _filtered(client, "what cools slowly, and how is tea brewed?", {"eq": {"author": "Ann"}})
    assert anns and all("Green tea" in text for text in anns), anns
    recent = {"range": {"published": {"gte": {"date": "2024-01-01"}}}}
    assert all("Green tea" in text for text in _filtered(client, "basalt lava", recent))
    bobs = _filtered(client, "how is tea brewed?", {"eq": {"author": "Bob"}})
    assert bobs and all("Basalt" in text for text in bobs), bobs


@pytest.mark.parametrize(
    "metadata", ["{not json", '["a list"]', '{"Bad Key": 1}', '{"flag": true}']
)
def test_bad_upload_metadata_is_422_with_nothing_stored(
    client: TestClient, tmp_path: Path, metadata: str
) -> None:
    answer = _upload(client, "tea.md", NOTES, metadata=metadata)
    assert answer.status_code == 422, answer.text
    assert "metadata" in answer.json()["detail"]
    assert _objects(tmp_path) == []


class _RefusesOnce:
    """The task topic's publisher, refusing the first publish as RabbitMQ does when no queue
    is bound to the topic yet (an unroutable message)."""

    def __init__(self, publisher: Any) -> None:
        from ragline.adapters.wire_format.json import JsonTaskPublisher

        self._inner = JsonTaskPublisher(publisher)
        self.refused = 0

    async def publish(self, task: Any) -> None:
        if not self.refused:
            self.refused += 1
            raise MessageBusError("rabbitmq-publisher-tasks: UnroutableError: 1 unroutable")
        await self._inner.publish(task)


def test_a_refused_publish_is_a_503_and_the_same_key_queues_it(tmp_path: Path) -> None:
    container = container_for(tmp_path / "data")
    container.parse_task_publisher.override(
        providers.Singleton(_RefusesOnce, publisher=container.task_publisher)
    )
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    with TestClient(app) as client:
        embedding = container.default_embedding()
        body = {"provider": embedding.provider, "model": embedding.model}
        body["dimension"] = embedding.dimension
        put = client.put(
            "/api/v1/users/1001/model-configs/embedding", json=body, headers=bearer(SERVICE_TOKEN)
        )
        assert put.status_code == 200, put.text
        refused = _upload(client, "notes.md", NOTES, key="k-bus")
        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"] == "5"
        assert "message bus could not take the task" in refused.json()["detail"]
        again = _upload(client, "notes.md", NOTES, key="k-bus")
        assert again.status_code == 202, again.text
        run = finished_run(client, again.json()["task_id"], ALICE_TOKEN)
        assert run["pipeline_status"] == "SUCCESS", run
