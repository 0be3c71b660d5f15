"""The optional re-ranking step: `ragline search` with RAGLINE_SEARCH_RERANK_DEPTH set asks
the chat model (an OpenAI-compatible server on loopback) to order the top candidates."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.e2e.conftest import Ingested
from tests.e2e.ragline_process import run

QUERY = "how to brew green tea"


class ChatServer:
    """/v1/chat/completions answering with the passage numbers of the prompt, reversed
    (or a fixed `reply`, or HTTP 500); records the prompts it got."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.reply: str | None = None
        self.fail = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                server.prompts.append(prompt)
                if server.fail or self.path != "/v1/chat/completions":
                    self.send_response(500)
                    self.end_headers()
                    return
                numbers = re.findall(r"^\[(\d+)\]", prompt, re.M)
                content = server.reply or ", ".join(reversed(numbers))
                answer = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    server = ChatServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _hits(ingested: Ingested, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    done = run(ingested.data_dir, "search", QUERY, "--top-k", "4", "--json", env=env)
    assert done.returncode == 0, done.explain()
    hits: list[dict[str, Any]] = json.loads(done.stdout)["hits"]
    return hits


def _settings(chat: ChatServer) -> dict[str, str]:
    return {
        "RAGLINE_SEARCH_RERANK_DEPTH": "4",
        "RAGLINE_LLM_BASE_URL": chat.url,
        "RAGLINE_LLM_MODEL": "test-ranker",
    }


def test_the_model_orders_the_top_candidates(examples_ingested: Ingested, chat: ChatServer) -> None:
    plain = _hits(examples_ingested)
    reranked = _hits(examples_ingested, _settings(chat))
    assert len(chat.prompts) == 1 and QUERY in chat.prompts[0]
    assert [h["chunk_id"] for h in reranked] == [h["chunk_id"] for h in reversed(plain)]
    scores = [h["score"] for h in reranked]
    assert scores == sorted(scores, reverse=True)  # scores still fall down the list


def test_a_failing_model_keeps_the_fused_order(
    examples_ingested: Ingested, chat: ChatServer
) -> None:
    plain = [h["chunk_id"] for h in _hits(examples_ingested)]
    chat.fail = True
    assert [h["chunk_id"] for h in _hits(examples_ingested, _settings(chat))] == plain
    chat.fail, chat.reply = False, "none of them"
    assert [h["chunk_id"] for h in _hits(examples_ingested, _settings(chat))] == plain
    assert len(chat.prompts) == 2


def test_off_by_default(examples_ingested: Ingested, chat: ChatServer) -> None:
    env = {"RAGLINE_LLM_BASE_URL": chat.url, "RAGLINE_LLM_MODEL": "test-ranker"}
    _hits(examples_ingested, env)
    assert chat.prompts == []
