"""A loopback OpenAI-compatible /v1/embeddings server that answers every text with one vector.

    .venv/bin/python -m benchmarks.retrieval.constant_embeddings --port 18931 &
    RAGLINE_EMBEDDER=openai RAGLINE_EMBEDDING_BASE_URL=http://127.0.0.1:18931/v1 \\
      RAGLINE_EMBEDDING_MODEL=constant RAGLINE_EMBEDDING_DIMENSION=384 \\
      .venv/bin/ragline ingest CORPUS --data-dir LEXICAL_DIR

Why: embedding ~34k children with e5 takes hours on two shared cores, while the sparse and
BM25 indexes do not depend on the vectors at all. An index built this way gives exact
sparse and BM25 figures (`ragline eval`'s sparse / bm25 rows, candidate recall included) in
minutes; its dense, fused and final rows are meaningless (every vector is the same) and
are never reported.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSION = 384


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vector: list[float] | str = [1.0] + [0.0] * (DIMENSION - 1)
        if body.get("encoding_format") == "base64":  # as OpenAI: little-endian float32
            vector = base64.b64encode(struct.pack(f"<{DIMENSION}f", *vector)).decode()
        data = [{"object": "embedding", "index": i, "embedding": vector} for i in range(len(texts))]
        payload = json.dumps({"object": "list", "data": data, "model": body.get("model")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=18931)
    args = ap.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), _Handler).serve_forever()


if __name__ == "__main__":
    main()
