"""POST /api/v1/tasks/redrive: the service token's way back for task dead letters (issue 19);
a tenant token is refused (the dead-letter topic holds every tenant's tasks). What a
redrive does on each bus is tests/delivery/test_task_redrive.py."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, bearer


def test_the_service_token_redrives_task_dead_letters(client: TestClient) -> None:
    response = client.post(
        "/api/v1/tasks/redrive", json={"limit": 10}, headers=bearer(SERVICE_TOKEN)
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"redriven": []}


def test_a_tenant_token_may_not_redrive_tasks(client: TestClient) -> None:
    response = client.post("/api/v1/tasks/redrive", json={}, headers=bearer(ALICE_TOKEN))
    assert response.status_code == 403
    assert "service token" in response.json()["detail"]
