"""The HTTP app over a real container on embedded defaults in a temp data dir (SQLite, local
objects, in-process bus with a worker in the app's lifespan, embedded vectors, Tantivy, and
the bundled model), driven in-process with Starlette's TestClient."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for

SERVICE_TOKEN = "service-token-0123456789"
ALICE_TOKEN = "alice-token-0123456789ab"
BOB_TOKEN = "bob-token-0123456789abcd"
TOKENS = {SERVICE_TOKEN: "*", ALICE_TOKEN: "1001", BOB_TOKEN: "2002"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class RunsApi(Protocol):
    def get(self, url: str, *, headers: dict[str, str]) -> Any: ...


def finished_run(api: RunsApi, task_id: str, token: str, timeout: float = 120) -> dict[str, Any]:
    """Poll GET /api/v1/runs/{task_id} (a TestClient or an httpx client) until it is terminal."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = api.get(f"/api/v1/runs/{task_id}", headers=bearer(token))
        if response.status_code == 200 and response.json()["finished_at"] is not None:
            run: dict[str, Any] = response.json()
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {task_id} did not finish in {timeout} s")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    container = container_for(tmp_path / "data")
    app = create_app(
        entry_for(container), ApiTokens.parse(json.dumps(TOKENS)), max_body_bytes=2_000_000
    )
    app.state.container = container  # the tests' handle for seeding; the app reads its Entry
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def open_client(tmp_path: Path) -> Iterator[TestClient]:
    container = container_for(tmp_path / "open")
    app = create_app(entry_for(container), ApiTokens.parse(None))
    app.state.container = container  # the tests' handle for seeding
    with TestClient(app, base_url="http://127.0.0.1:8000") as test_client:  # a loopback Host
        yield test_client
