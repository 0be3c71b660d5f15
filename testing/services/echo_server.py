"""A real loopback HTTP server that answers every POST with an error body quoting the
request's Authorization header, as some OpenAI-compatible servers and proxies do.

The first path segment says how: `/s401-p190/...` answers 401 after 190 characters of
padding (so a cut at some length falls inside the echoed key). Every answer carries
`Retry-After: 0`, so a client that retries 5xx does not wait.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class EchoingServer:
    def __init__(self) -> None:
        outer = self
        self.requests: list[dict[str, str]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append({**headers, "path": self.path})
                status, padding, well = outer.route(self.path)
                prefix = self.path.strip("/").split("/")[0]
                if sum(r["path"].strip("/").startswith(prefix) for r in outer.requests) <= well:
                    # a model config is probed when it is written: answer that one well
                    status, body = (
                        200,
                        json.dumps(
                            {"data": [{"index": 0, "embedding": [0.1] * 8}], "model": "echo"}
                        ).encode(),
                    )
                else:
                    body = json.dumps(
                        {
                            "error": {"message": "x" * padding, "type": "invalid_request_error"},
                            "you_sent": {"authorization": headers.get("authorization", "")},
                        }
                    ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @staticmethod
    def route(path: str) -> tuple[int, int, int]:
        """`/s401-p0-w1/embeddings` -> (401, 0, 1): the first request is answered well."""
        status, padding, well = path.strip("/").split("/")[0].split("-")
        return int(status[1:]), int(padding[1:]), int(well[1:])

    def base_url(self, status: int, padding: int = 0, well: int = 0) -> str:
        """`well`: how many first requests get a good answer (a written config's probe)."""
        return f"http://127.0.0.1:{self.port}/s{status}-p{padding}-w{well}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def echoing_server() -> Iterator[EchoingServer]:
    server = EchoingServer()
    yield server
    server.close()


def pieces(secret: str, size: int = 8) -> list[str]:
    """Every `size`-character piece of `secret`: a cut-off key is still a leaked key."""
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaked(text: str, secret: str) -> list[str]:
    """The pieces of `secret` found in `text` (empty: nothing leaked)."""
    return [piece for piece in pieces(secret) if piece in text]
