"""`python -m campaigns.faults [--stages S,...] [--dependencies D,...]
[--backlogs D,...] [--backlog-tasks N] [--outage-seconds S]`: the fault campaign (every
stage x every dependency, then a backlog-during-outage cell per dependency, by default),
tables on stdout, the cells in benchmarks/results/faults.json; exit 1 when a cell is not as
specified."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from dataclasses import asdict
from pathlib import Path

from campaigns.faults.backlog import BACKLOG_DEPENDENCIES, BacklogResult
from campaigns.faults.campaign import (
    DEPENDENCIES,
    STAGES,
    CellResult,
    run_campaign_with_backlogs,
)
from ragline.domain.parse_run import Stage

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "faults.json"


def table(results: list[CellResult]) -> str:
    """stage x dependency -> outcome, as docs/reliability.md shows it."""
    dependencies = list(dict.fromkeys(r.dependency for r in results))
    stages = list(dict.fromkeys(r.stage for r in results))
    cell = {(r.stage, r.dependency): r for r in results}
    lines = [
        "| stage at which it goes away | " + " | ".join(dependencies) + " |",
        "|---|" + "---|" * len(dependencies),
    ]
    for stage in stages:
        row = []
        for dependency in dependencies:
            found = cell.get((stage, dependency))
            if found is None:
                row.append("")
            else:
                mark = "" if found.ok else " ✗ " + "; ".join(found.problems)
                row.append(found.outcome + mark)
        lines.append(f"| {stage} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def backlog_table(results: list[BacklogResult]) -> str:
    lines = [
        "| away | queued | outage | outcome | holds | all answered after |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        mark = "" if r.ok else " ✗ " + "; ".join(r.problems)
        lines.append(
            f"| {r.dependency} | {r.tasks} | {r.outage_seconds:.0f} s | {r.outcome}{mark} "
            f"| {r.held} | {r.seconds_to_all_answered} s |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stages", default=",".join(s.value for s in STAGES))
    parser.add_argument("--dependencies", default=",".join(DEPENDENCIES))
    parser.add_argument("--backlogs", default=",".join(BACKLOG_DEPENDENCIES))
    parser.add_argument("--backlog-tasks", type=int, default=50)
    parser.add_argument("--outage-seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--verbose", action="store_true", help="ragline's own log lines too")
    args = parser.parse_args()
    quiet = logging.WARNING if args.verbose else logging.CRITICAL  # the faults log errors
    logging.basicConfig(level=quiet, format="%(levelname)s %(name)s %(message)s")
    logging.getLogger("ragline.campaigns.faults").setLevel(logging.INFO)
    stages = [Stage(name.strip().upper()) for name in args.stages.split(",") if name.strip()]
    dependencies = [name.strip() for name in args.dependencies.split(",") if name.strip()]
    unknown = set(dependencies) - set(DEPENDENCIES)
    if unknown:
        parser.error(f"unknown dependencies {sorted(unknown)} (of {', '.join(DEPENDENCIES)})")
    cells = [(d, s) for s in stages for d in dependencies]
    backlogs = [name.strip() for name in args.backlogs.split(",") if name.strip()]
    started = time.perf_counter()
    results, held = asyncio.run(
        run_campaign_with_backlogs(
            cells,
            backlogs,
            backlog_tasks=args.backlog_tasks,
            outage_seconds=args.outage_seconds,
        )
    )
    seconds = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "seconds": round(seconds, 1),
        "cells": [asdict(r) | {"outcome": r.outcome, "ok": r.ok} for r in results],
        "backlogs": [asdict(r) | {"outcome": r.outcome, "ok": r.ok} for r in held],
    }
    args.out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(table(results))
    print()
    print(backlog_table(held))
    total = len(results) + len(held)
    failed = [r for r in results if not r.ok] + [r for r in held if not r.ok]
    print(f"\n{total - len(failed)}/{total} cells as specified in {seconds:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
