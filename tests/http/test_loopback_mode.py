"""The no-token mode answers loopback callers only (issue 18: any Host was accepted, so DNS
rebinding reached the API, and multipart endpoints were reachable cross-site)."""

from __future__ import annotations

import io

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http.loopback import is_loopback_host, is_loopback_origin
from tests.http.conftest import SERVICE_TOKEN, bearer

PROBLEM = "application/problem+json"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("localhost:8000", True),
        ("LOCALHOST.", True),
        ("127.0.0.1", True),
        ("127.0.0.1:65535", True),
        ("127.8.9.10:1", True),
        ("[::1]", True),
        ("[::1]:8000", True),
        ("::1", True),
        ("app.localhost:3000", True),
        ("evil.example", False),
        ("evil.example:8000", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io", False),
        ("10.0.0.1:8000", False),
        ("[::2]:80", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback
    assert is_loopback_origin(f"http://{host}") is (loopback and bool(host))


def test_a_host_that_is_not_loopback_is_misdirected(open_client: TestClient) -> None:
    refused = open_client.get("/healthz", headers={"Host": "rebound.evil.example"})
    assert refused.status_code == 421 and refused.headers["content-type"] == PROBLEM
    assert "loopback" in refused.json()["detail"]
    for host in ("localhost:8000", "127.0.0.1", "[::1]:9"):
        assert open_client.get("/healthz", headers={"Host": host}).status_code == 200


def test_cross_site_requests_may_not_change_state(open_client: TestClient) -> None:
    upload = {"file": ("a.txt", io.BytesIO(b"words to parse"), "text/plain")}
    for headers in (
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "cross-site"},
    ):
        for call in (
            lambda h: open_client.post("/api/v1/parser/extract_sync", files=upload, headers=h),
            lambda h: open_client.post("/api/v1/chunks/preview", json={"text": "x"}, headers=h),
            lambda h: open_client.delete("/api/v1/users/1/model-configs/chat", headers=h),
        ):
            refused = call(headers)
            assert refused.status_code == 403, (headers, refused.text)
            assert refused.headers["content-type"] == PROBLEM
    same_site = {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}
    allowed = open_client.post("/api/v1/chunks/preview", json={"text": "x"}, headers=same_site)
    assert allowed.status_code == 200
    plain = open_client.post("/api/v1/parser/extract_sync", files=upload)  # curl, scripts
    assert plain.status_code == 200 and "words to parse" in plain.json()["markdown"]
    readable = open_client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert readable.status_code == 200  # reading: the browser keeps the answer from the page


def test_with_tokens_the_token_is_the_guard(client: TestClient) -> None:
    """A deployment with tokens sits behind its own proxy and names: Host is not checked."""
    answer = client.get("/healthz", headers={"Host": "ragline.internal.example"})
    assert answer.status_code == 200
    cross = client.post(
        "/api/v1/chunks/preview",
        json={"text": "x"},
        headers={**bearer(SERVICE_TOKEN), "Origin": "https://app.example"},
    )
    assert cross.status_code == 200
