"""What a tenant learns of ids it does not own: nothing but "not found" (or, for a task_id,
"taken"). Each answer to another tenant's run, document or task is compared byte for byte
with the answer to one that does not exist (docs/security.md, Existence and ids)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from fastapi.testclient import TestClient

from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, bearer, finished_run
from tests.http.test_documents_and_model_configs import SEED_TASK, TEXT, _default_embedding

CONFIGS = "/api/v1/users/{user}/model-configs/embedding"

TENANT_BUCKET = "sources"  # a tenant bucket of the default settings (RAGLINE_TENANT_BUCKETS)


def _task(user: int, task_id: str, doc: int, key: str, **changes: Any) -> dict[str, Any]:
    return {
        **SEED_TASK,
        "task_id": task_id,
        "user_id": user,
        "original_file_id": doc,
        "file_type": "txt",
        "source_filename": "tea.txt",
        "source_bucket": TENANT_BUCKET,
        "source_object_key": key,
        "md_bucket": TENANT_BUCKET,
        "md_object_key": f"{user}/parsed/{task_id}.md",
        "image_bucket": TENANT_BUCKET,
        "image_prefix": f"{user}/images/{task_id}/",
        **changes,
    }


def _upload(client: TestClient, key: str) -> None:
    storage = client.app.state.container.storage()  # type: ignore[attr-defined]

    async def upload() -> None:
        await storage.ensure_bucket(TENANT_BUCKET)
        await storage.put_bytes(TENANT_BUCKET, key, TEXT.encode())

    asyncio.run(upload())


def _submit(client: TestClient, token: str, task: dict[str, Any]) -> Any:
    return client.post("/api/v1/parser/task/submit", json=task, headers=bearer(token))


def _same(first: Any, second: Any) -> None:
    assert first.status_code == second.status_code, (first.text, second.text)
    assert first.content == second.content
    assert first.headers.get("content-type") == second.headers.get("content-type")


def test_another_tenants_runs_and_documents_answer_exactly_as_missing_ones(
    client: TestClient,
) -> None:
    for user in ("1001", "2002"):
        response = client.put(
            CONFIGS.format(user=user),
            json=_default_embedding(client),
            headers=bearer(SERVICE_TOKEN),
        )
        assert response.status_code == 200, response.text
    # Alice: one indexed document (doc 555) and one FAILED run (its source is missing)
    _upload(client, "1001/raw/tea.txt")
    assert (
        _submit(client, ALICE_TOKEN, _task(1001, "a-ok", 555, "1001/raw/tea.txt")).status_code
        == 202
    )
    assert finished_run(client, "a-ok", ALICE_TOKEN)["pipeline_status"] == "SUCCESS"
    missing_source = _task(1001, "a-failed", 556, "1001/raw/gone.txt")
    assert _submit(client, ALICE_TOKEN, missing_source).status_code == 202
    assert finished_run(client, "a-failed", ALICE_TOKEN)["pipeline_status"] == "FAILED"

    bob = bearer(BOB_TOKEN)
    # the same path but for the id: rename both ids to one of the same length
    for alices, nobodys in (("a-ok", "n-ok"), ("a-failed", "n-failed")):
        _same(
            client.get(f"/api/v1/runs/{alices}", headers=bob),
            client.get(f"/api/v1/runs/{nobodys}", headers=bob),
        )
    retry_alices = client.post("/api/v1/runs/a-failed/retry", headers=bob)
    retry_nobodys = client.post("/api/v1/runs/n-failed/retry", headers=bob)
    assert retry_alices.status_code == 404, retry_alices.text
    assert retry_alices.json()["detail"] == "no such run"
    _same(retry_alices, retry_nobodys)
    for method, path in (
        ("POST", "/api/v1/documents/{doc}/reindex?dataset_id=2001"),
        ("DELETE", "/api/v1/documents/{doc}?dataset_id=2001"),
    ):
        alices = client.request(method, path.format(doc=555), headers=bob)
        nobodys = client.request(method, path.format(doc=999), headers=bob)
        assert alices.status_code == 404, alices.text
        # the detail names the id asked for, so compare it with the id swapped
        assert alices.content.replace(b"555", b"999") == nobodys.content
    # Alice's runs are untouched by all that
    assert finished_run(client, "a-ok", ALICE_TOKEN)["pipeline_status"] == "SUCCESS"
    alices_failed = client.get("/api/v1/runs/a-failed", headers=bearer(ALICE_TOKEN)).json()
    assert alices_failed["superseded_by_task_id"] is None

    # a retry on the broker naming Alice's run: Bob's own run fails as one naming no run
    _upload(client, "2002/raw/tea.txt")
    bobs = _task(2002, "b-first", 777, "2002/raw/tea.txt")
    for task_id, previous in (("b-r-alices", "a-failed"), ("b-r-nobody", "n-failed")):
        retry = {**bobs, "task_id": task_id, "is_retry": True, "previous_task_id": previous}
        retry["trigger_mode"] = "manual_retry"
        assert _submit(client, BOB_TOKEN, retry).status_code == 202
    views = [finished_run(client, task_id, BOB_TOKEN) for task_id in ("b-r-alices", "b-r-nobody")]
    assert views[0]["failure_reason"] == "RETRY_VALIDATION_FAILED:previous_not_found"
    normalised = [
        {k: v for k, v in view.items() if k not in ("task_id", "created_at", "finished_at")}
        for view in views
    ]
    normalised[0]["retry_of_task_id"] = normalised[1]["retry_of_task_id"] = "<previous>"
    assert normalised[0] == normalised[1]
    assert client.get("/api/v1/runs/a-failed", headers=bearer(ALICE_TOKEN)).json() == alices_failed


def test_a_task_id_another_tenant_holds_is_taken_and_says_nothing_more(
    client: TestClient,
) -> None:
    response = client.put(
        CONFIGS.format(user="1001"), json=_default_embedding(client), headers=bearer(SERVICE_TOKEN)
    )
    assert response.status_code == 200
    _upload(client, "1001/raw/tea.txt")
    alices = _task(1001, "shared-id", 555, "1001/raw/tea.txt")
    assert _submit(client, ALICE_TOKEN, alices).status_code == 202
    alices_run = finished_run(client, "shared-id", ALICE_TOKEN)
    assert alices_run["pipeline_status"] == "SUCCESS"
    # Alice's own resubmit is a redelivery (her result is sent again)
    assert _submit(client, ALICE_TOKEN, alices).status_code == 202

    _upload(client, "2002/raw/tea.txt")
    bobs = _task(2002, "shared-id", 555, "2002/raw/tea.txt")
    taken = _submit(client, BOB_TOKEN, bobs)
    assert taken.status_code == 409, taken.text
    assert taken.json() == {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "task_id shared-id is already taken",
    }
    # a task_id of the same tenant but another file is taken too (never a redelivery)
    other_file = _submit(client, ALICE_TOKEN, {**alices, "original_file_id": 556})
    assert other_file.status_code == 409
    assert re.sub(b"shared-id", b"X", other_file.content) == re.sub(
        b"shared-id", b"X", taken.content
    )
    assert client.get("/api/v1/runs/shared-id", headers=bearer(BOB_TOKEN)).status_code == 404
    after = client.get("/api/v1/runs/shared-id", headers=bearer(ALICE_TOKEN)).json()
    assert after == alices_run
