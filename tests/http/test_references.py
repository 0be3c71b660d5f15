"""Every object reference over HTTP goes through the one rule (docs/security.md): a tenant token
names only keys under its own `<user_id>/` prefix of the tenant buckets (default: `sources`
and `markdown`), the service token any object but the parse cache's area; a refusal is a 403
problem whose detail is `<field>: <reason>`, before anything is read or published."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.application.health import obtain
from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, bearer, finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
PROBLEM = "application/problem+json"
TEXT = b"Green tea is brewed with water at about 80 degrees.\n\nBlack tea wants it boiling.\n"
ALICE, BOB = 1001, 2002


def put(client: TestClient, bucket: str, key: str, data: bytes = TEXT) -> None:
    async def upload() -> None:
        storage = await obtain(client.app.state.container.storage)  # type: ignore[attr-defined]
        await storage.ensure_bucket(bucket)
        await storage.put_bytes(bucket, key, data)

    client.portal.call(upload)  # type: ignore[union-attr]


def ensure(client: TestClient, bucket: str) -> None:
    async def create() -> None:
        storage = await obtain(client.app.state.container.storage)  # type: ignore[attr-defined]
        await storage.ensure_bucket(bucket)

    client.portal.call(create)  # type: ignore[union-attr]


def stored(client: TestClient, bucket: str, key: str) -> bytes | None:
    async def read() -> bytes | None:
        storage = await obtain(client.app.state.container.storage)  # type: ignore[attr-defined]
        if await storage.stat(bucket, key) is None:
            return None
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "object"
            await storage.get_to_file(bucket, key, path)
            return path.read_bytes()

    result: bytes | None = client.portal.call(read)  # type: ignore[union-attr]
    return result


def refused(response: Any, detail: str) -> None:
    assert response.status_code == 403, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["detail"] == detail


def text_task(task_id: str, user: int, **changes: Any) -> dict[str, Any]:
    """A txt task of `user` under its own prefix of the default tenant buckets."""
    task = {
        **SEED_TASK,
        "task_id": task_id,
        "user_id": user,
        "file_type": "txt",
        "pdf_parser_backend": "auto",
        "source_bucket": "sources",
        "source_object_key": f"{user}/{task_id}.txt",
        "source_filename": "tea.txt",
        "md_bucket": "markdown",
        "md_object_key": f"{user}/{task_id}.md",
        "image_bucket": None,
        "image_prefix": None,
    }
    task.update(changes)
    return task


def submit(client: TestClient, task: dict[str, Any], token: str) -> Any:
    return client.post("/api/v1/parser/task/submit", json=task, headers=bearer(token))


# -- POST /api/v1/parser/task/submit ----------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        (
            {"source_object_key": f"{BOB}/their.txt"},
            f"source: key must start with the caller's prefix {ALICE}/",
        ),
        (
            {"source_bucket": "tolink-rag-docs"},
            "source: bucket 'tolink-rag-docs' is not open to tenants",
        ),
        (
            {"md_object_key": f"{BOB}/their.md"},
            f"md: key must start with the caller's prefix {ALICE}/",
        ),
        (
            {"md_bucket": "sources", "md_object_key": f"{BOB}/their.txt"},
            f"md: key must start with the caller's prefix {ALICE}/",
        ),
        (
            {"md_bucket": "parse-cache", "md_object_key": "v1/pages/ab/x/basic/1.json"},
            "md: names an area only ragline writes (the parse cache)",
        ),
        (
            {"image_bucket": "markdown", "image_prefix": f"{BOB}/images/"},
            f"image: key must start with the caller's prefix {ALICE}/",
        ),
        (
            {"user_id": BOB, "source_object_key": f"{BOB}/x.txt"},
            "user_id: must be the token's own user",
        ),
    ],
)
def test_a_tenant_submit_naming_what_is_not_its_own_is_403(
    client: TestClient, changes: dict[str, Any], detail: str
) -> None:
    put(client, "sources", f"{BOB}/their.txt", b"bob's words")
    put(client, "markdown", f"{BOB}/their.md", b"bob's markdown")
    refused(submit(client, text_task("refused-1", ALICE, **changes), ALICE_TOKEN), detail)
    assert stored(client, "markdown", f"{BOB}/their.md") == b"bob's markdown"
    assert client.get("/api/v1/runs/refused-1", headers=bearer(SERVICE_TOKEN)).status_code == 404


def test_a_tenant_submit_under_its_own_prefix_runs(client: TestClient) -> None:
    task = text_task("own-1", ALICE, image_bucket="markdown", image_prefix=f"{ALICE}/img/")
    put(client, "sources", task["source_object_key"])
    ensure(client, "markdown")
    response = submit(client, task, ALICE_TOKEN)
    assert response.status_code == 202, response.text
    run = finished_run(client, "own-1", ALICE_TOKEN)
    assert run["stages"][0]["status"] == "SUCCESS", run["failure_reason"]
    assert stored(client, "markdown", task["md_object_key"])


def test_the_service_names_any_object_but_never_the_parse_cache(client: TestClient) -> None:
    cache = {"md_bucket": "parse-cache", "md_object_key": "v1/pages/ab/x/basic/1.json"}
    refused(
        submit(client, text_task("svc-1", ALICE, **cache), SERVICE_TOKEN),
        "md: names an area only ragline writes (the parse cache)",
    )
    elsewhere = text_task(
        "svc-2", ALICE, source_bucket="uploads", source_object_key="raw/a.txt", md_bucket="uploads"
    )
    assert submit(client, elsewhere, SERVICE_TOKEN).status_code == 202


def test_a_raw_message_naming_the_cache_fails_invalid_task_context_on_the_worker(
    client: TestClient,
) -> None:
    """The broker path: what the HTTP submit refuses, the worker refuses for any producer."""
    key = "v1/pages/ab/x/basic/1.json"
    put(client, "parse-cache", key, b'{"first": 1, "pages": ["cached"]}')
    task = text_task("raw-cache-1", ALICE, md_bucket="parse-cache", md_object_key=key)
    put(client, "sources", task["source_object_key"])
    response = client.post("/api/v1/mq/send/parse-task", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    run = finished_run(client, "raw-cache-1", SERVICE_TOKEN)
    assert run["failure_code"] == "INVALID_TASK_CONTEXT"
    assert run["failure_reason"].endswith("md: names an area only ragline writes (the parse cache)")
    assert stored(client, "parse-cache", key) == b'{"first": 1, "pages": ["cached"]}'


# -- POST/GET /api/v1/parses ------------------------------------------------------------


def test_a_tenant_names_its_own_objects_in_parse_requests_only(client: TestClient) -> None:
    own, theirs = f"sources/{ALICE}/notes.txt", f"sources/{BOB}/notes.txt"
    put(client, "sources", f"{ALICE}/notes.txt")
    put(client, "sources", f"{BOB}/notes.txt", b"bob's notes")
    alice = bearer(ALICE_TOKEN)
    planned = client.post("/api/v1/parses", json={"doc_ref": own}, headers=alice)
    assert planned.status_code == 200, planned.text
    coverage = client.get("/api/v1/parses", params={"doc_ref": own}, headers=alice)
    assert coverage.status_code == 200, coverage.text
    assert coverage.json()["sha256"] == planned.json()["sha256"]
    detail = f"doc_ref: key must start with the caller's prefix {ALICE}/"
    refused(client.post("/api/v1/parses", json={"doc_ref": theirs}, headers=alice), detail)
    refused(client.get("/api/v1/parses", params={"doc_ref": theirs}, headers=alice), detail)
    refused(
        client.get("/api/v1/parses/markdown", params={"doc_ref": theirs}, headers=alice), detail
    )
    refused(
        client.post("/parses", json={"doc_ref": "uploads/x.txt"}, headers=alice),
        "doc_ref: bucket 'uploads' is not open to tenants",
    )
    # the service names any object
    service = client.post("/api/v1/parses", json={"doc_ref": theirs}, headers=bearer(SERVICE_TOKEN))
    assert service.status_code == 200, service.text


# -- POST /api/v1/parser/extract_sync with a source -------------------------------------


def extract(client: TestClient, token: str, bucket: str, key: str) -> Any:
    source = json.dumps({"bucket": bucket, "object_key": key, "file_type": "txt"})
    return client.post(
        "/api/v1/parser/extract_sync", data={"source": source}, headers=bearer(token)
    )


def test_extract_sync_reads_a_tenant_s_own_object_only(client: TestClient) -> None:
    put(client, "sources", f"{ALICE}/tea.txt")
    put(client, "sources", f"{BOB}/tea.txt", b"bob's tea")
    response = extract(client, ALICE_TOKEN, "sources", f"{ALICE}/tea.txt")
    assert response.status_code == 200, response.text
    assert "Green tea" in response.json()["markdown"]
    refused(
        extract(client, ALICE_TOKEN, "sources", f"{BOB}/tea.txt"),
        f"source: key must start with the caller's prefix {ALICE}/",
    )
    refused(
        extract(client, ALICE_TOKEN, "sources", f"{ALICE}/../{BOB}/tea.txt"),
        "source: key must not contain empty, '.' or '..' segments",
    )
    assert extract(client, SERVICE_TOKEN, "sources", f"{BOB}/tea.txt").status_code == 200


# -- reindex and retry of a stored task -------------------------------------------------


def _service_document(client: TestClient, task_id: str, upload: bool) -> dict[str, Any]:
    """A run of Alice's that the service submitted with its own bucket layout: a stored task
    naming objects Alice's token may not name (as a task stored before the rule would)."""
    task = text_task(
        task_id,
        ALICE,
        source_bucket="uploads",
        source_object_key=f"raw/{task_id}.txt",
        md_bucket="uploads",
        md_object_key=f"parsed/{task_id}.md",
    )
    ensure(client, "uploads")
    if upload:
        put(client, "uploads", task["source_object_key"])
    assert submit(client, task, SERVICE_TOKEN).status_code == 202
    return finished_run(client, task_id, SERVICE_TOKEN)


def test_a_tenant_reindex_of_a_task_naming_what_it_may_not_is_403(client: TestClient) -> None:
    run = _service_document(client, "stored-1", upload=True)
    assert run["stages"][0]["status"] == "SUCCESS"  # its Markdown is stored: reindexable
    url = f"/api/v1/documents/{run['original_file_id']}/reindex?dataset_id={run['dataset_id']}"
    refused(
        client.post(url, headers=bearer(ALICE_TOKEN)),
        "source: bucket 'uploads' is not open to tenants",
    )
    assert client.get("/api/v1/runs/stored-1-x1", headers=bearer(SERVICE_TOKEN)).status_code == 404
    service = client.post(f"{url}&user_id={ALICE}", headers=bearer(SERVICE_TOKEN))
    assert service.status_code == 202, service.text
    assert service.json()["task_id"] == "stored-1-x1"


def test_a_tenant_reindex_of_its_own_document_runs(client: TestClient) -> None:
    task = text_task("mine-1", ALICE)
    put(client, "sources", task["source_object_key"])
    ensure(client, "markdown")
    assert submit(client, task, ALICE_TOKEN).status_code == 202
    run = finished_run(client, "mine-1", ALICE_TOKEN)
    url = f"/api/v1/documents/{run['original_file_id']}/reindex?dataset_id={run['dataset_id']}"
    response = client.post(url, headers=bearer(ALICE_TOKEN))
    assert response.status_code == 202, response.text


def test_a_tenant_retry_of_a_task_naming_what_it_may_not_is_403(client: TestClient) -> None:
    run = _service_document(client, "stored-2", upload=False)
    assert run["failure_code"] == "SOURCE_FILE_NOT_FOUND"
    refused(
        client.post("/api/v1/runs/stored-2/retry", headers=bearer(ALICE_TOKEN)),
        "source: bucket 'uploads' is not open to tenants",
    )
    assert client.get("/api/v1/runs/stored-2-r1", headers=bearer(SERVICE_TOKEN)).status_code == 404
    assert client.get("/api/v1/runs/stored-2", headers=bearer(BOB_TOKEN)).status_code == 404
    put(client, "uploads", "raw/stored-2.txt")
    retried = client.post("/api/v1/runs/stored-2/retry", headers=bearer(SERVICE_TOKEN))
    assert retried.status_code == 200, retried.text
    assert retried.json()["task_id"] == "stored-2-r1"


def test_without_tokens_the_default_user_s_raw_messages_are_checked_too(
    open_client: TestClient,
) -> None:
    """The broker's check is the service's; the default user of a server without tokens is a
    tenant (user 1), so the raw endpoint checks a readable body's references first."""
    raw = "/api/v1/mq/send/parse-task"
    refused(
        open_client.post(raw, json={**SEED_TASK, "task_id": "open-raw-1", "user_id": 1}),
        "source: bucket 'tolink-rag-docs' is not open to tenants",
    )
    assert open_client.post(raw, json=text_task("open-raw-2", 1)).status_code == 202
    unreadable = {"task_id": "open-raw-3", "file_type": "pdf", "user_id": 1}
    assert open_client.post(raw, json=unreadable).status_code == 202  # the worker rejects it
    assert finished_run(open_client, "open-raw-3", "")["failure_code"] == "INVALID_TASK_CONTEXT"
