"""Run `ragline eval --json` on gold sets against an ingested data dir; keep every try.

    .venv/bin/python -m benchmarks.retrieval.run LABEL --data-dir DIR GOLD.jsonl... [--set K=V]

`--set` passes settings (RAGLINE_SEARCH_DENSE_WEIGHT=2 ...) to that one run, so a query-side
change is measured on the same ingested index. Each run is appended to
benchmarks/results/retrieval.json (label, settings, data dir, figures per retriever) and a
table of the final ranking is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "retrieval.json"


def evaluate(gold: Path, data_dir: Path, settings: dict[str, str]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLINE_")}
    env.update(settings)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ragline.bootstrap.cli import main; main()",
            "eval",
            str(gold),
            "--json",
            "--data-dir",
            str(data_dir),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ragline eval {gold} failed:\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("label")
    ap.add_argument("gold", type=Path, nargs="+")
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the JSON list to extend")
    args = ap.parse_args()
    settings = dict(pair.split("=", 1) for pair in args.set)
    results: Path = args.results
    runs = json.loads(results.read_text("utf-8")) if results.exists() else []
    for gold in args.gold:
        report = evaluate(gold, args.data_dir, settings)
        runs.append(
            {
                "label": args.label,
                "gold": gold.name,
                "data_dir": args.data_dir.name,
                "settings": settings,
                "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "load_average": Path("/proc/loadavg").read_text("utf-8").split()[:3],
                "questions": report["questions"],
                "in_candidates": report["in_candidates"],
                "candidate_recall": report.get("candidate_recall", {}),
                "retrievers": report["retrievers"],
            }
        )
        rows = report["retrievers"]
        print(f"{args.label} {gold.name} (n={report['questions']}, pool {report['in_candidates']})")
        for name, figures in rows.items():
            print(f"  {name:7}" + "".join(f" {k} {v:.3f}" for k, v in figures.items()))
        for name, depths in report.get("candidate_recall", {}).items():
            print(f"  {name:7} in top" + "".join(f" {d}: {v:.3f}" for d, v in depths.items()))
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
