"""The console over a real container on embedded defaults (the API's test tokens), driven
in-process; seed tasks of two tenants that fail (their source object is absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.adapters.inbound.http.console.session import COOKIE, cookie_value
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from tests.http.conftest import ALICE_TOKEN, BOB_TOKEN, SERVICE_TOKEN, TOKENS, bearer, finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
ALICE_RUN = "console-alice-1"
BOB_RUN = "console-bob-1"


def session(token: str) -> dict[str, str]:
    """The header a logged-in browser sends: the console cookie holding the token."""
    return {"Cookie": f"{COOKIE}={cookie_value(token)}"}


def submit(client: TestClient, task_id: str, user_id: int, **changes: object) -> None:
    task = {**SEED_TASK, "task_id": task_id, "user_id": user_id, **changes}
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text


@pytest.fixture
def console(tmp_path: Path) -> Iterator[TestClient]:
    """Alice (1001) and Bob (2002) each have one FAILED run (SOURCE_FILE_NOT_FOUND)."""
    container = container_for(tmp_path / "data")
    app = create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)))
    with TestClient(app) as client:
        submit(client, ALICE_RUN, 1001)
        submit(client, BOB_RUN, 2002, dataset_id=3003, original_file_id=777)
        finished_run(client, ALICE_RUN, ALICE_TOKEN)
        finished_run(client, BOB_RUN, BOB_TOKEN)
        yield client


__all__ = ["ALICE_TOKEN", "BOB_TOKEN", "SERVICE_TOKEN"]
