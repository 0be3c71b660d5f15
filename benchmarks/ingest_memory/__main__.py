"""Peak memory of `ragline ingest` on one large text file, per process (issue 24 item 1):
`.venv/bin/python -m benchmarks.ingest_memory [--sizes 25,50,100] [--kinds unique,repeated]`.

Each run is a fresh subprocess (benchmarks.ingest_memory.child: the ingest path in-process
with the constant embedder, fresh data dir) whose process tree (the ingest process and the
parser sandbox worker) is polled every 20 ms: each process's peak RSS (its VmHWM, read from
/proc while it lives; the poll's maximum if it is gone) and the peak of the tree's summed
RSS (what the machine had to hold at once). Two kinds of file: `unique` (seeded prose, every
sentence different, ASCII) and `repeated` (one 2 KB block of prose with a Chinese line and
typographic quotes, so the text is not ASCII, repeated). The
slope (MB of peak per MB of file) comes from the smallest and largest size of each kind.
Writes benchmarks/results/ingest_memory.json and prints a table. Before/after: run the harness
in a checkout of the older code with `--output OLD.json`, then here with `--before OLD.json`
(the report keeps both, each with its slopes; `--label`, `--before-label` name them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

from benchmarks.ingest.corpus import PROSE, prose_file
from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "ingest_memory.json"
POLL = 0.02
TARGET_TOTAL_MB = 600
TARGET_SLOPE = 3.0


CJK_LINE = "绿茶用八十度的水冲泡两分钟，“不要”用沸水。\n\n"


def repeated_file(megabytes: int) -> Path:
    """`megabytes` MB of one ~2 KB block (the 2 MB prose file's start and a Chinese line)
    repeated."""
    path = PROSE / f"repeated-{megabytes}mb.txt"
    if path.exists():
        return path
    block = prose_file(2).read_text(encoding="utf-8")[:2000]
    block = block[: block.rfind("\n\n") + 2] + CJK_LINE
    with path.open("w", encoding="utf-8") as out:
        for _ in range(megabytes * 1_000_000 // len(block.encode("utf-8"))):
            out.write(block)
    return path


def _vmhwm_mb(process: psutil.Process) -> float | None:
    try:
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _role(process: psutil.Process, root: int) -> str:
    if process.pid == root:
        return "ingest"
    try:
        cmd = " ".join(process.cmdline())
    except psutil.Error:
        return "other"
    return "parser_worker" if "sandbox_worker" in cmd else "other"


def measure(path: Path, work: Path) -> dict[str, Any]:
    """One ingest of `path` in a fresh subprocess, its process tree polled."""
    cmd = [sys.executable, "-m", "benchmarks.ingest_memory.child", str(work), str(path)]
    load_before = round(os.getloadavg()[0], 2)
    started = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT.parent)
    root = psutil.Process(child.pid)
    peaks: dict[int, tuple[str, float]] = {}  # pid -> (role, MB)
    total_peak = 0.0
    while child.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        total = 0.0
        for process in tree:
            try:
                rss = process.memory_info().rss / 1024**2
            except psutil.Error:
                continue
            total += rss
            hwm = _vmhwm_mb(process) or rss
            role, seen = peaks.get(process.pid, ("other", 0.0))
            if role == "other":  # its command line may not be readable yet (just forked)
                role = _role(process, child.pid)
            peaks[process.pid] = (role, max(seen, hwm, rss))
        total_peak = max(total_peak, total)
        time.sleep(POLL)
    out, _ = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"ingest child failed ({child.returncode})")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    by_role: dict[str, float] = {}
    for role, mb in peaks.values():
        by_role[role] = max(by_role.get(role, 0.0), mb)
    result.update(
        file=path.name,
        file_mb=round(path.stat().st_size / 1e6, 1),
        wall_s=round(time.perf_counter() - started, 1),
        peak_mb={role: round(mb, 1) for role, mb in sorted(by_role.items())},
        peak_sum_of_processes_mb=round(sum(by_role.values()), 1),
        peak_total_at_once_mb=round(total_peak, 1),
        load_before=load_before,
        load_after=round(os.getloadavg()[0], 2),
    )
    return result


def _slopes(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in sorted({r["kind"] for r in runs}):
        mine = sorted((r for r in runs if r["kind"] == kind), key=lambda r: r["file_mb"])
        if len(mine) < 2:
            continue
        low, high = mine[0], mine[-1]
        span = high["file_mb"] - low["file_mb"]
        out[kind] = {
            "total_mb_per_file_mb": round(
                (high["peak_sum_of_processes_mb"] - low["peak_sum_of_processes_mb"]) / span, 2
            ),
            "at_once_mb_per_file_mb": round(
                (high["peak_total_at_once_mb"] - low["peak_total_at_once_mb"]) / span, 2
            ),
            "from_mb": low["file_mb"],
            "to_mb": high["file_mb"],
        }
    return out


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for run in report["runs"]:
        if run["file_mb"] >= 95:
            total = run["peak_sum_of_processes_mb"]
            rows.append(
                {
                    "target": f"total peak RSS (all processes) <= {TARGET_TOTAL_MB} MB at 100 MB "
                    f"({run['kind']})",
                    "measured": f"{total} MB ({run['file_mb']} MB file)",
                    "met": total <= TARGET_TOTAL_MB,
                }
            )
    for kind, slope in report["slopes"].items():
        rows.append(
            {
                "target": f"slope <= {TARGET_SLOPE}x the file size ({kind})",
                "measured": f"{slope['total_mb_per_file_mb']} MB per MB",
                "met": slope["total_mb_per_file_mb"] <= TARGET_SLOPE,
            }
        )
    return rows


def with_before(
    report: dict[str, Any], before: dict[str, Any], label: str, before_label: str
) -> dict[str, Any]:
    """`report` (this code's runs, labelled `label`) with `before` (a report of the code it
    is compared with, labelled `before_label`) under "before", slopes and targets redone."""
    runs = [dict(run, code=label) for run in report["runs"]]
    old = [dict(run, code=before_label) for run in before["runs"]]
    merged = dict(report, runs=runs, slopes=_slopes(runs))
    merged["before"] = {
        "code": before_label,
        "timestamp_utc": before.get("timestamp_utc"),
        "machine": before.get("machine"),
        "runs": old,
        "slopes": _slopes(old),
    }
    merged["targets"] = _targets(merged)
    return merged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="25,100", help="file sizes in MB, comma-separated")
    ap.add_argument("--kinds", default="unique,repeated")
    ap.add_argument("--output", type=Path, default=RESULTS)
    ap.add_argument(
        "--before",
        type=Path,
        help="a report of the code to compare with (this harness run there, --output elsewhere)",
    )
    ap.add_argument("--label", default="after", help="this code's label in the report")
    ap.add_argument("--before-label", default="before")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = [k for k in args.kinds.split(",") if k.strip()]
    report: dict[str, Any] = {
        "benchmark": "ingest_memory",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="ragline-bench-memory-") as tmp:
        for size in sizes:
            for kind in kinds:
                path = prose_file(size) if kind == "unique" else repeated_file(size)
                print(f"[{time.strftime('%H:%M:%S')}] {kind} {size} MB ...", flush=True)
                run = measure(path, Path(tmp) / f"{kind}-{size}")
                run["kind"] = kind
                report["runs"].append(run)
                print(json.dumps(run), flush=True)
    report["slopes"] = _slopes(report["runs"])
    report["targets"] = _targets(report)
    report["machine"]["load_average_end"] = round(os.getloadavg()[0], 2)
    if args.before is not None:
        before = json.loads(args.before.read_text(encoding="utf-8"))
        report = with_before(report, before, args.label, args.before_label)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for row in report["targets"]:
        print(f"{'yes' if row['met'] else 'NO ':4} {row['target']}: {row['measured']}")


if __name__ == "__main__":
    main()
