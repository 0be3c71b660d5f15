"""A tiny OpenAI-compatible chat-completions server on loopback (http.server in a thread).

Each test queues the behaviour of the next requests: a canned reply, an HTTP status, a delay,
or a broken payload. The adapter under test talks real HTTP to it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Behaviour:
    content: str = ""
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None


@dataclass
class FakeOpenAI:
    url: str
    queue: list[Behaviour] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def reply(self, content: str) -> None:
        self.queue.append(Behaviour(content=content))


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    state = FakeOpenAI(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            state.requests.append({"path": self.path, **body})
            state.headers.append(dict(self.headers))
            b = state.queue.pop(0) if state.queue else Behaviour(status=500)
            if b.delay:
                time.sleep(b.delay)
            if b.raw is not None:
                payload = b.raw
            else:
                payload = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": b.content}}
                        ],
                    }
                ).encode()
            try:
                self.send_response(b.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
