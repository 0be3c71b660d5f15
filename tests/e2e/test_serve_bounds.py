"""`ragline serve` as a process on embedded defaults, no tokens: it cuts off a slow client
with 408 and answers only a loopback Host (issue 18), through its real uvicorn server."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.e2e.serve_process import ragline_server


def test_serve_times_out_slow_heads_and_refuses_other_hosts(tmp_path: Path) -> None:
    env = {"RAGLINE_HTTP_HEADER_TIMEOUT_SECONDS": "0.5", "RAGLINE_HTTP_BODY_TIMEOUT_SECONDS": "0.5"}
    with ragline_server(tmp_path / "data", "serve", env=env) as (base, log):
        address = urlsplit(base)
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # never finished
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 ")
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            sock.sendall(
                b"POST /api/v1/chunks/preview HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                b"content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert httpx.get(f"{base}/healthz").status_code == 200
        rebound = httpx.get(f"{base}/healthz", headers={"Host": f"evil.example:{address.port}"})
        assert rebound.status_code == 421
    assert "Traceback" not in log.read_text(errors="replace")  # a client cut off is no error
