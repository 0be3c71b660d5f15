"""What the campaigns and the load benchmark run against, started and stopped here.

PostgreSQL (127.0.0.1:5432, a fresh database each time), RabbitMQ (127.0.0.1:5672) or tansu
(a Kafka-protocol broker on a free port), noida-db (the Elasticsearch API, for a keyword
index two worker processes can share) and a constant OpenAI-compatible embeddings endpoint
(every text gets the same unit vector: the model's cost is not what is measured).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg

from ragline.testing.services.fixtures import (
    start_noida,
    start_tansu,
    stop_process,
)

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
DIMENSION = 384
_UNIT = [1.0 / math.sqrt(DIMENSION)] * DIMENSION


@contextlib.contextmanager
def postgres_database(prefix: str = "campaign") -> Iterator[str]:
    """A new, empty PostgreSQL database; dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0")
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def kafka_broker(work: Path) -> Iterator[str]:
    proc, bootstrap = start_tansu(work / "tansu.log")
    try:
        yield bootstrap
    finally:
        stop_process(proc)


@contextlib.contextmanager
def elasticsearch(work: Path) -> Iterator[str]:
    """noida-db serving only its Elasticsearch API on a free port."""
    data_dir = work / "noida"
    data_dir.mkdir(parents=True, exist_ok=True)
    proc, url = start_noida(data_dir, work / "noida.log")
    try:
        yield url
    finally:
        stop_process(proc)


class _Embeddings(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        texts = body.get("input") or []
        answer = json.dumps(
            {
                "object": "list",
                "model": body.get("model", "constant"),
                "data": [
                    {"object": "embedding", "index": i, "embedding": _UNIT}
                    for i in range(len(texts))
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


@contextlib.contextmanager
def constant_embeddings() -> Iterator[str]:
    """The base URL (ending in /v1) of an OpenAI-compatible endpoint with constant vectors."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
