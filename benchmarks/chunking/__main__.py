"""Chunking benchmark: `.venv/bin/python -m benchmarks.chunking [--repeat N] [--quick]`.

Runs ragline's default plan and the peer chunkers on the same corpora (CPython docs as
Markdown, a Chinese Markdown document), in one process, interleaved round by round so that
machine load affects all alike; reports the best round per tool. Writes
benchmarks/results/chunking.json and prints a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
import tracemalloc
from pathlib import Path
from typing import Any

from benchmarks.chunking.corpus import chinese_markdown, cpython_markdown
from benchmarks.chunking.peers import PEERS, SUBSET, SUBSET_CHARS, Chunker
from benchmarks.machine import machine_facts

RESULTS = Path(__file__).resolve().parents[1] / "results" / "chunking.json"


def _distribution(sizes: list[int]) -> dict[str, float]:
    if not sizes:
        return {"count": 0}
    ordered = sorted(sizes)
    return {
        "count": len(ordered),
        "min": ordered[0],
        "p10": ordered[len(ordered) // 10],
        "median": statistics.median(ordered),
        "p90": ordered[(len(ordered) * 9) // 10],
        "max": ordered[-1],
        "mean": round(statistics.fmean(ordered), 1),
    }


def _peak_memory(chunker: Chunker, text: str) -> int:
    """Peak bytes allocated by Python during one run (tracemalloc; input excluded)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = chunker(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5, help="rounds per tool (best is kept)")
    ap.add_argument("--quick", action="store_true", help="ragline and the fast peers only")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    args = ap.parse_args()

    corpora = {"cpython-docs": cpython_markdown(), "chinese": chinese_markdown()}
    names = [n for n in PEERS if not (args.quick and n in SUBSET)]
    chunkers = {n: PEERS[n]() for n in names}
    inputs = {
        (n, c): (text[:SUBSET_CHARS] if n in SUBSET else text)
        for n in names
        for c, text in corpora.items()
    }
    best: dict[tuple[str, str], float] = {}
    sizes: dict[tuple[str, str], dict[str, list[int]]] = {}
    for (n, c), text in inputs.items():  # warm-up (imports, caches), also records the output
        sizes[(n, c)] = chunkers[n](text)
    for _ in range(args.repeat):
        for (n, c), text in inputs.items():
            gc.collect()
            t0 = time.perf_counter()
            chunkers[n](text)
            elapsed = time.perf_counter() - t0
            best[(n, c)] = min(best.get((n, c), float("inf")), elapsed)

    rows = []
    for (n, c), text in inputs.items():
        mb = len(text.encode("utf-8")) / 1e6
        peak = None if args.no_memory else _peak_memory(chunkers[n], text)
        rows.append(
            {
                "tool": n,
                "corpus": c,
                "corpus_mb": round(mb, 3),
                "subset": n in SUBSET and len(corpora[c]) > SUBSET_CHARS,
                "seconds": round(best[(n, c)], 4),
                "mb_per_s": round(mb / best[(n, c)], 2),
                "peak_memory_mb": None if peak is None else round(peak / 1e6, 2),
                "peak_over_corpus": None if peak is None else round(peak / 1e6 / mb, 2),
                "levels": {k: _distribution(v) for k, v in sizes[(n, c)].items()},
            }
        )
    report = {
        "benchmark": "chunking",
        "target_chars": 512,
        "repeat": args.repeat,
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "results": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _print_table(rows)
    print(f"\nwritten {RESULTS}  (machine: {report['machine']})")


def _print_table(rows: list[dict[str, Any]]) -> None:
    header = f"{'tool':44} {'corpus':13} {'MB':>6} {'MB/s':>7} {'peak MB':>8} {'xcorp':>6}  chunks"
    print(header)
    print("-" * len(header))
    for r in rows:
        levels = ", ".join(
            f"{k} {v['count']} (median {v.get('median', 0):.0f})" for k, v in r["levels"].items()
        )
        peak = "-" if r["peak_memory_mb"] is None else f"{r['peak_memory_mb']:.1f}"
        ratio = "-" if r["peak_over_corpus"] is None else f"{r['peak_over_corpus']:.2f}"
        tool = r["tool"] + (" *" if r["subset"] else "")
        print(
            f"{tool:44} {r['corpus']:13} {r['corpus_mb']:6.2f} {r['mb_per_s']:7.2f} "
            f"{peak:>8} {ratio:>6}  {levels}"
        )
    if any(r["subset"] for r in rows):
        print(f"* measured on the first {SUBSET_CHARS:,} characters of the corpus (too slow)")


if __name__ == "__main__":
    main()
