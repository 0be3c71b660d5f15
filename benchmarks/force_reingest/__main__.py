"""A forced re-ingest against the first ingest of the same pages (issue 24 item 2).

Each round takes a fresh data dir, ingests the CPython library pages with the constant
embedder (the model's cost kept out: what is measured is everything else), then runs
`ragline ingest --force` over the same pages in the same data dir, both in-process as the CLI
runs them (`benchmarks/ingest/ragline_run.ingest`). The rounds run back to back, so first and
forced share the machine's load; the medians and the per-round ratio forced / first are
reported with the load averages, and the stage times summed over the files.

    .venv/bin/python -m benchmarks.force_reingest [--max-chars 3000000] [--rounds 3]

JSON: benchmarks/results/force_reingest.json (`--out` to write elsewhere, e.g. when the same
harness runs against an older commit's code for a before/after).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.force_reingest.threads import thread_cpu
from benchmarks.ingest.corpus import library_pages
from benchmarks.ingest.ragline_run import ingest
from benchmarks.machine import machine_facts

RESULTS = Path(__file__).resolve().parents[1] / "results" / "force_reingest.json"
TARGET = 1.0


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _commit() -> str:
    import ragline.domain

    root = Path(ragline.domain.__file__).resolve().parents[1]
    out = subprocess.run(  # nosec B603 B607: git, fixed arguments
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    keep = ("files", "failed", "children", "seconds", "cpu_seconds", "stage_ms_sum")
    return {k: run[k] for k in keep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-chars", type=int, default=3_000_000, help="Markdown characters")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    pages = library_pages(args.max_chars)
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="ragline-bench-force-") as tmp:
            data = Path(tmp) / "data"
            load_before = _load()
            with thread_cpu() as first_threads:
                first = asyncio.run(ingest(data, pages, fake=True, keep_texts=False))
            with thread_cpu() as forced_threads:
                forced = asyncio.run(ingest(data, pages, fake=True, keep_texts=False, force=True))
            if first["failed"] or forced["failed"]:
                raise SystemExit(f"files failed: {first['failures'] or forced['failures']}")
            ratio = forced["seconds"] / first["seconds"]
            rounds.append(
                {
                    "round": n + 1,
                    "load_1m_before": load_before,
                    "load_1m_after": _load(),
                    "first": _summary(first) | {"thread_cpu_s": first_threads},
                    "forced": _summary(forced) | {"thread_cpu_s": forced_threads},
                    "forced_over_first": round(ratio, 3),
                }
            )
            print(
                f"round {n + 1}: first {first['seconds']:.2f} s, --force "
                f"{forced['seconds']:.2f} s ({ratio:.2f}x), load {load_before} -> {_load()}; "
                f"merge threads {first_threads.get('merge_thread_', 0.0):.2f} -> "
                f"{forced_threads.get('merge_thread_', 0.0):.2f} s CPU",
                flush=True,
            )
    median_ratio = statistics.median(r["forced_over_first"] for r in rounds)
    report = {
        "benchmark": "force_reingest",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "machine": machine_facts(),
        "corpus": {
            "source": "python3.11-doc library/*.html -> Markdown, first pages",
            "pages": len(pages),
            "chars": sum(len(p.read_text(encoding="utf-8")) for p in pages),
        },
        "embedder": "constant (testing.services.constant_embedder)",
        "rounds": rounds,
        "median_first_s": statistics.median(r["first"]["seconds"] for r in rounds),
        "median_forced_s": statistics.median(r["forced"]["seconds"] for r in rounds),
        "median_forced_over_first": median_ratio,
        "target": f"forced / first <= {TARGET}",
        "met": median_ratio <= TARGET,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(
        f"{len(pages)} pages: median first {report['median_first_s']:.2f} s, --force "
        f"{report['median_forced_s']:.2f} s, forced / first {median_ratio:.2f} "
        f"(target <= {TARGET}: {'met' if report['met'] else 'missed'}) -> {args.out}"
    )


if __name__ == "__main__":
    main()
