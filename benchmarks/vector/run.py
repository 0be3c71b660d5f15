"""One engine, one process: `python -m benchmarks.vector.run ENGINE POINTS [options]`.

Writes POINTS dense points (dimension 384, lists of floats as an embedder returns them) in
batches, then a sparse vector (~60 Zipf-distributed hashed term ids, BM25-like weights) for
each, all in one scope; then times dense and sparse queries. Only the upsert/query awaits
are timed (the synthetic data is generated outside the clock, one batch at a time). RSS is
sampled every `--every` points so growth with collection size shows. Runs in its own process
so VmHWM (/proc high-water mark) belongs to this engine alone. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorIndex,
)

USER, DATASET = "bench-user", "bench-dataset"
VOCABULARY = 50_000
DRAWS = 75  # draws per point before de-duplication: ~60 distinct terms
QUERY_TERMS = 8


def _proc_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


class Corpus:
    """Deterministic synthetic points: batch k is the same whatever the batch sizes."""

    def __init__(self, dimension: int, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.dimension = dimension
        self.seed = seed
        self.term_ids = rng.choice(2**32, size=VOCABULARY, replace=False).astype(np.int64)
        ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
        weights = 1.0 / (ranks + 10.0)  # Zipf-like: a few terms in most chunks, a long tail
        self.cdf = np.cumsum(weights / weights.sum())

    def _terms(self, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        ranks = np.minimum(np.searchsorted(self.cdf, rng.random(size)), VOCABULARY - 1)
        return self.term_ids[ranks]

    def payload(self, i: int) -> ChunkPayload:
        return ChunkPayload(USER, DATASET, f"doc-{i // 200}", f"parent-{i // 20}", {})

    def dense(self, start: int, stop: int) -> list[DensePoint]:
        rng = np.random.default_rng((self.seed, 1, start))
        matrix = rng.standard_normal((stop - start, self.dimension), dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return [
            DensePoint(chunk_id=f"c{start + k}", vector=row, payload=self.payload(start + k))
            for k, row in enumerate(matrix.tolist())
        ]

    def sparse(self, start: int, stop: int) -> list[SparsePoint]:
        rng = np.random.default_rng((self.seed, 2, start))
        drawn = self._terms(rng, (stop - start, DRAWS))
        points = []
        for k, row in enumerate(drawn):
            terms = np.unique(row)
            values = rng.uniform(0.4, 2.0, size=len(terms))
            vector = SparseVector(indices=terms.tolist(), values=values.tolist())
            points.append(SparsePoint(f"c{start + k}", vector, self.payload(start + k)))
        return points

    def dense_queries(self, count: int) -> list[list[float]]:
        rng = np.random.default_rng((self.seed, 3))
        return rng.standard_normal((count, self.dimension)).tolist()  # type: ignore[no-any-return]

    def sparse_queries(self, count: int) -> list[SparseVector]:
        rng = np.random.default_rng((self.seed, 4))
        queries = []
        for row in self._terms(rng, (count, QUERY_TERMS * 2)):
            terms = np.unique(row)[:QUERY_TERMS]
            queries.append(SparseVector(indices=terms.tolist(), values=[1.0] * len(terms)))
        return queries


def _open(engine: str, directory: Path) -> VectorIndex:
    if engine == "embedded":
        from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex

        return EmbeddedVectorIndex(directory / "embedded")
    from ragline.adapters.vector_index.qdrant import QdrantVectorIndex

    return QdrantVectorIndex("bench", path=str(directory / "qdrant"))


async def _write(
    make: Callable[[int, int], list[Any]],
    upsert: Callable[[list[Any]], Awaitable[None]],
    points: int,
    batch: int,
    every: int,
) -> dict[str, Any]:
    seconds = 0.0
    rss: dict[str, float] = {}
    checkpoint = every
    for start in range(0, points, batch):
        stop = min(start + batch, points)
        part = make(start, stop)
        began = time.perf_counter()
        await upsert(part)
        seconds += time.perf_counter() - began
        if stop >= checkpoint or stop == points:
            rss[str(stop)] = _proc_mb("VmRSS")
            checkpoint = stop + every
    return {
        "batch": batch,
        "seconds": round(seconds, 3),
        "points_per_s": round(points / seconds),
        "rss_mb_after_points": rss,
    }


async def _queries(
    ask: Callable[[Any], Awaitable[list[Any]]], queries: list[Any]
) -> dict[str, Any]:
    timings = []
    hits = 0
    for query in queries:
        began = time.perf_counter()
        found = await ask(query)
        timings.append((time.perf_counter() - began) * 1000)
        hits += len(found)
    warm = timings[1:]
    quantiles = statistics.quantiles(warm, n=20)
    return {
        "queries": len(queries),
        "first_ms": round(timings[0], 1),
        "p50_ms": round(statistics.median(warm), 2),
        "p95_ms": round(quantiles[18], 2),
        "mean_hits": round(hits / len(queries), 1),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(args.dimension)
    with tempfile.TemporaryDirectory() as tmp:
        index = _open(args.engine, Path(tmp))
        try:
            await index.ensure_collection(args.dimension)
            result: dict[str, Any] = {
                "engine": args.engine,
                "points": args.points,
                "dimension": args.dimension,
                "rss_mb_before_writes": _proc_mb("VmRSS"),
            }
            result["upsert_dense"] = await _write(
                corpus.dense, index.upsert_dense, args.points, args.dense_batch, args.every
            )
            result["upsert_sparse"] = await _write(
                corpus.sparse, index.upsert_sparse, args.points, args.sparse_batch, args.every
            )
            result["peak_rss_mb_after_writes"] = _proc_mb("VmHWM")
            limit = args.limit
            dense_queries = corpus.dense_queries(args.queries)
            result["query_dense"] = await _queries(
                lambda q: index.query_dense(USER, DATASET, q, limit), dense_queries
            )
            sparse_queries = corpus.sparse_queries(args.queries)
            result["query_sparse"] = await _queries(
                lambda q: index.query_sparse(USER, DATASET, q, limit), sparse_queries
            )
            result["peak_rss_mb"] = _proc_mb("VmHWM")
            result["files_mb"] = round(
                sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file()) / 2**20, 1
            )
        finally:
            await index.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("engine", choices=["embedded", "qdrant-local"])
    parser.add_argument("points", type=int)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--dense-batch", type=int, default=64)
    parser.add_argument("--sparse-batch", type=int, default=256)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--every", type=int, default=10_000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
