"""A loopback MinerU: the documented precision extract API v4, scriptable per test.

POST /api/v4/extract/task -> {code, msg, trace_id, data: {task_id}}; GET
/api/v4/extract/task/<id> -> {code, data: {task_id, state, full_zip_url, err_msg}}; the zip
is served from /results/<id>.zip. `script` holds canned answers consumed before the normal
behaviour (status, body, headers, delay), so tests can make it slow, failing or malformed.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "test-token-0123456789"


@dataclass
class Canned:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def result_zip(markdown: str = "# Report\n\n![](images/fig1.jpg)\n\nBody text.\n") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("full.md", markdown)
        archive.writestr("images/fig1.jpg", b"\xff\xd8\xff fake jpeg")
        archive.writestr("content_list.json", "[]")
    return out.getvalue()


@dataclass
class MineruState:
    polls_until_done: int = 2
    final_state: str = "done"
    err_msg: str = ""
    archive: bytes = field(default_factory=result_zip)
    script: dict[str, list[Canned]] = field(default_factory=dict)  # "create" | "poll" | "zip"
    created: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0
    zip_auth_headers: list[str | None] = field(default_factory=list)
    base: str = ""


def _handler(state: MineruState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            with suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def _json(self, payload: dict[str, Any]) -> None:
            self._send(200, json.dumps(payload).encode(), {"Content-Type": "application/json"})

        def _canned(self, kind: str) -> bool:
            queue = state.script.get(kind)
            if not queue:
                return False
            answer = queue.pop(0)
            if answer.delay:
                time.sleep(answer.delay)
            self._send(answer.status, answer.body, answer.headers)
            return True

        def _authorised(self) -> bool:
            if self.headers.get("Authorization") == f"Bearer {TOKEN}":
                return True
            self._json_status(401, {"code": "A0202", "msg": "token invalid"})
            return False

        def _json_status(self, status: int, payload: dict[str, Any]) -> None:
            self._send(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.path != "/api/v4/extract/task":
                self._send(404, b"")
                return
            if not self._authorised() or self._canned("create"):
                return
            request = json.loads(body)
            state.created.append(request)
            task_id = f"task-{len(state.created)}"
            self._json({"code": 0, "msg": "ok", "trace_id": "t", "data": {"task_id": task_id}})

        def do_GET(self) -> None:
            if self.path.startswith("/api/v4/extract/task/"):
                if not self._authorised() or self._canned("poll"):
                    return
                task_id = self.path.rsplit("/", 1)[1]
                state.polls += 1
                data: dict[str, Any] = {"task_id": task_id, "state": "running", "err_msg": ""}
                if state.polls > state.polls_until_done:
                    data["state"] = state.final_state
                    data["err_msg"] = state.err_msg
                    if state.final_state == "done":
                        data["full_zip_url"] = f"{state.base}/results/{task_id}.zip"
                elif state.polls == 1:
                    data["state"] = "pending"
                self._json({"code": 0, "msg": "ok", "trace_id": "t", "data": data})
            elif self.path.startswith("/results/"):
                state.zip_auth_headers.append(self.headers.get("Authorization"))
                if self._canned("zip"):
                    return
                self._send(200, state.archive, {"Content-Type": "application/zip"})
            else:
                self._send(404, b"")

    return Handler


@contextmanager
def mineru_server() -> Iterator[MineruState]:
    state = MineruState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
