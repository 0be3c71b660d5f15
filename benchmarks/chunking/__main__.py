"""Chunking benchmark: `.venv/bin/python -m benchmarks.chunking [--repeat N] [--quick]`.

Runs ragline's default plan and the peer chunkers on the same corpora (CPython docs as
Markdown, a Chinese Markdown document), in one process, interleaved round by round so that
machine load affects all alike; reports the median (and best) round per tool, and ragline's
speed ratio against each peer per round (median over rounds: both sides of a ratio ran
within seconds of each other). `--baseline COMMIT` adds ragline's engine at an older commit to
the same run. Writes benchmarks/results/chunking.json and prints a table.
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

from benchmarks.chunking.baseline import baseline_chunker
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
    ap.add_argument("--repeat", type=int, default=5, help="rounds per tool (median reported)")
    ap.add_argument("--quick", action="store_true", help="ragline and the fast peers only")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    ap.add_argument("--baseline", action="append", default=[], help="also run ragline at COMMIT")
    args = ap.parse_args()

    corpora = {"cpython-docs": cpython_markdown(), "chinese": chinese_markdown()}
    names = [n for n in PEERS if not (args.quick and n in SUBSET)]
    chunkers = {n: PEERS[n]() for n in names}
    for commit in args.baseline:
        name, chunker = baseline_chunker(commit)
        names.insert(1, name)
        chunkers[name] = chunker
    inputs = {
        (n, c): (text[:SUBSET_CHARS] if n in SUBSET else text)
        for n in names
        for c, text in corpora.items()
    }
    times: dict[tuple[str, str], list[float]] = {key: [] for key in inputs}
    sizes: dict[tuple[str, str], dict[str, list[int]]] = {}
    for (n, c), text in inputs.items():  # warm-up (imports, caches), also records the output
        sizes[(n, c)] = chunkers[n](text)
    for _ in range(args.repeat):
        for (n, c), text in inputs.items():
            gc.collect()
            t0 = time.perf_counter()
            chunkers[n](text)
            elapsed = time.perf_counter() - t0
            times[(n, c)].append(elapsed)

    ours = names[0]
    rows = []
    for (n, c), text in inputs.items():
        mb = len(text.encode("utf-8")) / 1e6
        median = statistics.median(times[(n, c)])
        # ragline's speed over this tool's, round by round (same input size only)
        same = text is inputs[(ours, c)]
        pairs = zip(times[(ours, c)], times[(n, c)], strict=True)
        ratio = statistics.median([t / o for o, t in pairs]) if same else None
        peak = None if args.no_memory else _peak_memory(chunkers[n], text)
        rows.append(
            {
                "tool": n,
                "corpus": c,
                "corpus_mb": round(mb, 3),
                "subset": n in SUBSET and len(corpora[c]) > SUBSET_CHARS,
                "seconds": round(median, 4),
                "seconds_best": round(min(times[(n, c)]), 4),
                "seconds_all": [round(t, 4) for t in times[(n, c)]],
                "mb_per_s": round(mb / median, 2),
                "ragline_speed_ratio": None if ratio is None else round(ratio, 2),
                "peak_memory_mb": None if peak is None else round(peak / 1e6, 2),
                "peak_over_corpus": None if peak is None else round(peak / 1e6 / mb, 2),
                "levels": {k: _distribution(v) for k, v in sizes[(n, c)].items()},
            }
        )
    report = {
        "benchmark": "chunking",
        "target_chars": 512,
        "repeat": args.repeat,
        "peers": _versions(),
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "results": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _print_table(rows)
    print(f"\nwritten {RESULTS}  (machine: {report['machine']})")


def _print_table(rows: list[dict[str, Any]]) -> None:
    header = (
        f"{'tool':44} {'corpus':13} {'MB':>6} {'MB/s':>7} {'ours/x':>6} {'peak MB':>8} "
        f"{'xcorp':>6}  chunks"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        levels = ", ".join(
            f"{k} {v['count']} (median {v.get('median', 0):.0f})" for k, v in r["levels"].items()
        )
        peak = "-" if r["peak_memory_mb"] is None else f"{r['peak_memory_mb']:.1f}"
        ratio = "-" if r["peak_over_corpus"] is None else f"{r['peak_over_corpus']:.2f}"
        tool = r["tool"] + (" *" if r["subset"] else "")
        x = "-" if r["ragline_speed_ratio"] is None else f"{r['ragline_speed_ratio']:.2f}"
        print(
            f"{tool:44} {r['corpus']:13} {r['corpus_mb']:6.2f} {r['mb_per_s']:7.2f} {x:>6} "
            f"{peak:>8} {ratio:>6}  {levels}"
        )
    if any(r["subset"] for r in rows):
        print(f"* measured on the first {SUBSET_CHARS:,} characters of the corpus (too slow)")


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("chonkie", "chonkie-core", "langchain-text-splitters", "llama-index-core"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "absent"
    return out


if __name__ == "__main__":
    main()
