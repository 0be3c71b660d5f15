"""The cases of docs/design/0003-parse-cache.md through the HTTP API (`ragline serve`'s app), on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, TOKENS, bearer
from tests.parse_cache.conftest import OtherWorker, make_pdf

BUCKET, KEY = "uploads", "docs/四页.pdf"
REF = f"{BUCKET}/{KEY}"
PROBLEM = "application/problem+json"
SERVICE = bearer(SERVICE_TOKEN)


@pytest.fixture
def api(settings: dict[str, Any], other: OtherWorker, tmp_path: Path) -> Iterator[TestClient]:
    other.put(BUCKET, KEY, make_pdf(tmp_path / "four.pdf"))
    options = dict(settings)
    container = container_for(options.pop("data_dir"), **options)
    with TestClient(
        create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)), run_worker=False)
    ) as client:
        yield client


def post(api: TestClient, **body: Any) -> dict[str, Any]:
    response = api.post("/api/v1/parses", json={"doc_ref": REF, **body}, headers=SERVICE)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    assert found["wait_parse_ids"] == found["reused_parse_ids"] + found["created_parse_ids"]
    return found


def batches(api: TestClient, ids: list[int]) -> list[dict[str, Any]]:
    response = api.get("/api/v1/parses", params={"ids": ",".join(map(str, ids))}, headers=SERVICE)
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()["parses"]
    return listed


def markdown(api: TestClient, sha256: str, **params: str) -> dict[str, Any]:
    response = api.get(
        "/api/v1/parses/markdown", params={"doc_ref": sha256, **params}, headers=SERVICE
    )
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def test_a_cache_hit_has_an_empty_wait_list(api: TestClient, other: OtherWorker) -> None:
    first = post(api)
    assert first["status"] == "pending" and first["page_range"] == "1-4"
    assert len(first["created_parse_ids"]) == 2  # 2 pages per batch
    assert other.run(first["wait_parse_ids"]).status.value == "done"
    assert {b["status"] for b in batches(api, first["wait_parse_ids"])} == {"done"}
    again = post(api)
    assert again["status"] == "done" and again["wait_parse_ids"] == []
    text = markdown(api, first["sha256"])["markdown"]
    assert "green tea step" in text
    coverage = api.get(
        "/api/v1/parses", params={"doc_ref": first["sha256"], "tier": "basic"}, headers=SERVICE
    ).json()
    assert coverage["status"] == "done" and coverage["missing_pages"] == []


def test_force_reuses_the_active_batch_and_raises_its_priority(api: TestClient) -> None:
    first = post(api, page_range="1-2")
    forced = post(api, page_range="1-2", force=True)
    assert forced["reused_parse_ids"] == first["created_parse_ids"]
    assert forced["created_parse_ids"] == []
    (batch,) = batches(api, forced["wait_parse_ids"])
    assert batch["status"] == "pending" and batch["priority"] == 1


def test_partial_reuse_and_creation(api: TestClient) -> None:
    first = post(api, page_range="3-4")
    whole = post(api)
    assert whole["reused_parse_ids"] == first["created_parse_ids"]
    (created,) = batches(api, whole["created_parse_ids"])
    assert created["page_range"] == "1-2"


def test_a_failed_force_batch_is_not_masked_by_the_old_cache(
    api: TestClient, other: OtherWorker
) -> None:
    first = post(api)
    other.run(first["wait_parse_ids"])
    forced = post(api, force=True)
    assert forced["status"] == "pending" and set(forced["created_parse_ids"]).isdisjoint(
        first["created_parse_ids"]
    )
    other.delete(BUCKET, KEY)  # the force batches cannot get the bytes any more
    ended = other.run(forced["wait_parse_ids"])
    assert ended.status.value == "failed" and "may still be readable" in ended.message
    failed = batches(api, forced["wait_parse_ids"])
    assert {b["status"] for b in failed} == {"failed"}
    assert {b["error_code"] for b in failed} == {"SOURCE_FILE_NOT_FOUND"}
    # the older cache is still readable, and says where it came from
    old = markdown(api, first["sha256"])
    assert set(old["parse_ids"]) == set(first["created_parse_ids"])


def test_reading_takes_the_newest_done_batch_of_each_page(
    api: TestClient, other: OtherWorker
) -> None:
    first = post(api)
    other.run(first["wait_parse_ids"])
    forced = post(api, page_range="2-3", force=True)
    other.run(forced["wait_parse_ids"])
    by_page = markdown(api, first["sha256"])["parse_ids"]
    old_1_2, old_3_4 = first["created_parse_ids"]
    new_2, new_3 = forced["created_parse_ids"][0], forced["created_parse_ids"][-1]
    assert by_page == [old_1_2, new_2, new_3, old_3_4]


def test_bad_tiers_ranges_and_references_are_problems(api: TestClient) -> None:
    def problem(response: Any, status: int) -> None:
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == PROBLEM

    for body in (
        {"tier": "premium"},
        {"page_range": "3-1"},
        {"page_range": "abc"},
        {"page_range": "0-2"},
        {"page_range": "1-99"},
    ):
        problem(api.post("/api/v1/parses", json={"doc_ref": REF, **body}, headers=SERVICE), 422)
    problem(api.post("/api/v1/parses", json={"doc_ref": REF}, headers=bearer(ALICE_TOKEN)), 403)
    problem(api.post("/api/v1/parses", json={"doc_ref": "f" * 64}, headers=SERVICE), 404)
    problem(api.post("/api/v1/parses", json={"doc_ref": "uploads/none.pdf"}, headers=SERVICE), 404)
    problem(api.post("/api/v1/parses", json={"doc_ref": REF}), 401)
    problem(api.get("/api/v1/parses", headers=SERVICE), 422)
    problem(api.get("/api/v1/parses", params={"ids": "1,x"}, headers=SERVICE), 422)
    problem(api.get("/api/v1/parses", params={"doc_ref": "e" * 64}, headers=SERVICE), 404)
    problem(
        api.get("/api/v1/parses", params={"doc_ref": "e" * 64, "tier": "gold"}, headers=SERVICE),
        422,
    )
    pending = post(api)
    problem(
        api.get("/api/v1/parses/markdown", params={"doc_ref": pending["sha256"]}, headers=SERVICE),
        409,
    )


def test_the_adr_paths_answer_the_same_operations(api: TestClient, other: OtherWorker) -> None:
    """POST /parses and GET /parses?ids=… (the design record's own paths) are the /api/v1
    operations."""
    response = api.post("/parses", json={"doc_ref": REF}, headers=SERVICE)
    assert response.status_code == 200, response.text
    first = response.json()
    assert first["wait_parse_ids"] == first["created_parse_ids"] and first["status"] == "pending"
    other.run(first["wait_parse_ids"])
    listed = api.get("/parses", params={"ids": ",".join(map(str, first["wait_parse_ids"]))},
                     headers=SERVICE)  # fmt: skip
    assert listed.status_code == 200 and {b["status"] for b in listed.json()["parses"]} == {"done"}
    assert post(api)["wait_parse_ids"] == []  # the same cache behind both paths
    assert api.post("/parses", json={"doc_ref": REF}).status_code == 401
