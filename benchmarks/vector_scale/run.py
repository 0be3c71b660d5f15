"""One engine, one size, one process: `python -m benchmarks.vector_scale.run ENGINE POINTS`.

Builds POINTS points (dense, then sparse; batches of --batch) spread over --tenants tenants,
then times, for the queried tenant: the VectorIndex port's query_dense (limit 10, with its
recall@10 against exact numpy search over that tenant's vectors) and query_sparse, and,
unless --no-hybrid, HybridSearch.search_many one query at a time (see hybrid.py). The first
query of each kind (which loads the scope) is reported apart. Disk is the index's files (or
its PostgreSQL relations); RSS is this process's high-water mark, plus the server's
processes for pgvector. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.vector_scale import engines
from benchmarks.vector_scale.data import (
    DATASET,
    DIMENSION,
    QUERIED,
    Layout,
    Texts,
    Vectors,
    dense_points,
    sparse_points,
    user,
)
from ragline.application.ports.sparse_encoder import SparseVector

TOP = 10
POOL = TOP * 4  # top_k x SearchTuning.candidates_per_retriever (default 4)


def proc_mb(field: str, pid: str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def stats(ms: list[float]) -> dict[str, Any]:
    warm = sorted(ms[1:])
    return {
        "queries": len(ms),
        "first_ms": round(ms[0], 1),
        "p50_ms": round(statistics.median(warm), 2),
        "p95_ms": round(warm[min(len(warm) - 1, int(len(warm) * 0.95))], 2),
        "mean_ms": round(statistics.fmean(warm), 2),
    }


async def _build(
    make: Callable[[int, int], list[Any]],
    upsert: Callable[[list[Any]], Awaitable[None]],
    points: int,
    batch: int,
) -> dict[str, Any]:
    seconds = 0.0
    for start in range(0, points, batch):
        part = make(start, min(start + batch, points))
        began = time.perf_counter()
        await upsert(part)
        seconds += time.perf_counter() - began
    return {"seconds": round(seconds, 3), "points_per_s": round(points / max(seconds, 1e-9))}


async def _timed(
    ask: Callable[[Any], Awaitable[Any]], queries: list[Any]
) -> tuple[list[float], list[Any]]:
    ms, answers = [], []
    for query in queries:
        began = time.perf_counter()
        answers.append(await ask(query))
        ms.append((time.perf_counter() - began) * 1000)
    return ms, answers


def _recall(layout: Layout, vectors: Vectors, queries: np.ndarray, found: list[list[str]]) -> float:
    """Mean share of the exact top-10 (by cosine over the tenant's vectors) found."""
    mine = layout.tenant_points()
    scores = queries @ vectors.rows(mine).T
    hits = 0
    for row, got in zip(scores, found, strict=True):
        best = mine[np.argsort(-row)[:TOP]]
        hits += len({layout.payload(int(i))[0] for i in best} & set(got))
    return round(hits / (TOP * len(found)), 4)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    layout, vectors, texts = Layout(args.points, args.tenants), Vectors(), Texts()
    queries = vectors.queries(args.queries + 1)
    owner = user(QUERIED)
    result: dict[str, Any] = {
        "engine": args.engine,
        "points": args.points,
        "tenants": args.tenants,
        "queried_tenant_points": len(layout.tenant_points()),
        "batch": args.batch,
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    with tempfile.TemporaryDirectory(prefix="vector-scale-") as tmp:
        async with engines.opened(args.engine, Path(tmp) / "index") as engine:
            index = engine.index
            result["settings"] = engine.settings
            await index.ensure_collection(DIMENSION)
            await engine.before_build(args.bulk)
            result["build_dense"] = await _build(
                lambda a, b: dense_points(layout, vectors, a, b),
                index.upsert_dense,
                args.points,
                args.batch,
            )
            result["index_seconds"] = await engine.after_build(args.bulk)
            if args.sparse_all:
                make_sparse = lambda a, b: sparse_points(layout, texts, a, b)  # noqa: E731
                sparse_count = args.points
            else:  # the queried tenant's only: a sparse query reads its own scope's postings
                make_sparse = lambda a, b: sparse_points(  # noqa: E731
                    layout, texts, a * args.tenants, b * args.tenants, step=args.tenants
                )
                sparse_count = len(layout.tenant_points())
            result["sparse_points"] = sparse_count
            result["build_sparse"] = await _build(
                make_sparse, index.upsert_sparse, sparse_count, args.batch
            )
            result["analyze_seconds"] = await engine.after_build(False)  # statistics again
            result["build_seconds"] = round(
                result["build_dense"]["seconds"]
                + result["index_seconds"]
                + result["build_sparse"]["seconds"],
                3,  # at 1 decimal a small build on a fast machine read 0.0
            )
            result["disk_mb"] = await engine.disk_mb()
            result["rss_mb_after_build"] = proc_mb("VmRSS")
            ms, answers = await _timed(
                lambda q: index.query_dense(owner, DATASET, q, TOP), queries.tolist()
            )
            result["port_dense"] = stats(ms)
            result["recall_at_10"] = _recall(
                layout, vectors, queries, [[h.chunk_id for h in a] for a in answers]
            )
            result["mean_hits"] = round(statistics.fmean(len(a) for a in answers), 1)
            ms, answers = await _timed(  # the candidate pool HybridSearch asks for
                lambda q: index.query_dense(owner, DATASET, q, POOL), queries.tolist()
            )
            result["port_dense_pool"] = {
                "limit": POOL,
                **stats(ms),
                "mean_hits": round(statistics.fmean(len(a) for a in answers), 1),
            }
            sparse_queries = [
                SparseVector(v.indices[:8], [1.0] * min(8, len(v.indices)))
                for v in texts.sparse(0, args.queries + 1)
            ]
            ms, _ = await _timed(
                lambda q: index.query_sparse(owner, DATASET, q, TOP), sparse_queries
            )
            result["port_sparse"] = stats(ms)
            if args.ef_sweep:
                result["ef_sweep"] = await _ef_sweep(engine, args, layout, vectors, queries)
            if not args.no_hybrid:
                result["hybrid"] = await _hybrid(
                    Path(tmp) / "app", index, layout, texts, queries, args
                )
            result["peak_rss_mb"] = proc_mb("VmHWM")
            result["server_rss_mb"] = engine.server_rss_mb()
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


async def _ef_sweep(
    engine: Any, args: argparse.Namespace, layout: Layout, vectors: Vectors, queries: np.ndarray
) -> dict[str, Any]:
    """pgvector: the same index queried with other hnsw.ef_search values (limit 10)."""
    from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex

    out: dict[str, Any] = {}
    for ef in (int(e) for e in args.ef_sweep.split(",")):
        index = PgvectorVectorIndex(engine.url, "bench", ef_search=ef)
        try:
            await index.ensure_collection(DIMENSION)
            ms, answers = await _timed(
                lambda q, i=index: i.query_dense(user(QUERIED), DATASET, q, TOP),
                queries.tolist(),
            )
            out[str(ef)] = {
                **stats(ms),
                "recall_at_10": _recall(
                    layout, vectors, queries, [[h.chunk_id for h in a] for a in answers]
                ),
            }
        finally:
            await index.close()
    return out


async def _hybrid(
    data_dir: Path,
    index: Any,
    layout: Layout,
    texts: Texts,
    queries: np.ndarray,
    args: argparse.Namespace,
) -> dict[str, Any]:
    from benchmarks.vector_scale.hybrid import prepare
    from ragline.bootstrap.entry import shut_down

    container, search, setup = await prepare(data_dir, index, layout, texts, queries.tolist())
    try:
        asked = texts.queries(args.hybrid_queries + 1)
        ms, answers = await _timed(
            lambda q: search.search_many([q], user(QUERIED), DATASET, TOP), asked
        )
        return {
            "setup_seconds": round(setup, 1),
            **stats(ms),
            "mean_hits": round(statistics.fmean(len(a[0].hits) for a in answers), 1),
            "degraded": sum(1 for a in answers if a[0].degraded),
        }
    finally:
        container.vectors.reset_override()  # the engine closes the index, not the container
        await shut_down(container)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("engine", choices=engines.NAMES)
    parser.add_argument("points", type=int)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--hybrid-queries", type=int, default=30)
    parser.add_argument("--no-hybrid", action="store_true")
    parser.add_argument("--ef-sweep", default="", help="pgvector: e.g. 40,100,200,400")
    parser.add_argument(
        "--bulk", action="store_true", help="pgvector: build the HNSW index after the load"
    )
    parser.add_argument(
        "--sparse-tenant-only",
        dest="sparse_all",
        action="store_false",
        help="write sparse vectors for the queried tenant only (the rest: dense only)",
    )
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
