"""Non-embedding work through the CLI (issue 24 item 3): `ragline ingest DIR` with its
defaults beside a LlamaIndex script, each a fresh process, side by side in one run:
`.venv/bin/python -m benchmarks.ingest_cli [--chars 3000000] [--rounds 3] [--workers 1,2,4]`.

Both sides get a constant embedder: ragline through its OpenAI-compatible adapter pointed at
a loopback server that answers every text with one vector
(`benchmarks.retrieval.constant_embeddings`), LlamaIndex its own MockEmbedding(384) with
Qdrant local. Each round runs ragline (a fresh data dir) and the peer (a fresh directory)
as processes, the order alternating round by round; the wall time is the process's, start-up
included, as a user waits for it; CPU time is the child's rusage. One untimed run of each
first writes the bytecode caches (a user's install has them; this machine's shells set
PYTHONDONTWRITEBYTECODE, which is unset for every child here). `--workers` adds a ragline
run per RAGLINE_INGEST_WORKERS value to each round (the default is the run without it).
Writes benchmarks/results/ingest_cli.json and prints a table; the load average is recorded
around every run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.ingest.corpus import library_pages
from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "ingest_cli.json"
RAGLINE = Path(sys.executable).with_name("ragline")


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(port: int, workers: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "RAGLINE_EMBEDDER": "openai",
        "RAGLINE_EMBEDDING_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "RAGLINE_EMBEDDING_MODEL": "constant",
        "RAGLINE_EMBEDDING_DIMENSION": "384",
    }
    if workers is not None:
        env["RAGLINE_INGEST_WORKERS"] = str(workers)
    return env


def _timed(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run `cmd` to its end; its wall time, its (and its children's) CPU seconds, its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = _load()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:3]} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "load_before": load,
        "load_after": _load(),
        "stdout": done.stdout,
    }


def _ragline(pages_dir: Path, data: Path, env: dict[str, str]) -> dict[str, Any]:
    shutil.rmtree(data, ignore_errors=True)
    run = _timed([str(RAGLINE), "ingest", str(pages_dir), "--data-dir", str(data), "--json"], env)
    summary = json.loads(run.pop("stdout"))
    run["chunks"], run["failed"] = summary["chunks"], summary["failed"]
    return run


def _llama(pages: list[Path], out: Path, env: dict[str, str]) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "benchmarks.ingest_cli.llama_child", str(out), *map(str, pages)]
    run = _timed(cmd, env)
    inner = json.loads(run.pop("stdout").strip().splitlines()[-1])
    run["chunks"] = inner["chunks"]
    run["pipeline_seconds"] = inner["seconds"]
    return run


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(runs, key=lambda r: float(r["seconds"]))
    median = dict(ordered[len(ordered) // 2])
    median["runs_seconds"] = [r["seconds"] for r in runs]
    median["runs_cpu_seconds"] = [r["cpu_seconds"] for r in runs]
    median["load_min"] = min(r["load_before"] for r in runs)
    median["load_max"] = max(r["load_after"] for r in runs)
    return median


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str] = {}
    for name in (
        "ragline",
        "llama-index-core",
        "llama-index-vector-stores-qdrant",
        "qdrant-client",
    ):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chars", type=int, default=3_000_000, help="Markdown characters of pages")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--workers", default="", help="RAGLINE_INGEST_WORKERS values to add, e.g. 1,2,4"
    )
    args = ap.parse_args()
    pages = library_pages(args.chars)
    sweep = [int(w) for w in args.workers.split(",") if w.strip()]
    port = _free_port()
    server = subprocess.Popen(  # nosec B603 - our interpreter, fixed argv
        [sys.executable, "-m", "benchmarks.retrieval.constant_embeddings", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    report: dict[str, Any] = {
        "benchmark": "ingest_cli",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "versions": _versions(),
        "corpus": {"pages": len(pages), "chars": sum(len(p.read_text("utf-8")) for p in pages)},
        "runs": {},
    }
    try:
        with tempfile.TemporaryDirectory(prefix="ragline-bench-cli-") as tmp:
            work = Path(tmp)
            pages_dir = work / "pages"
            pages_dir.mkdir()
            for page in pages:
                shutil.copy(page, pages_dir / page.name)
            schedule: list[tuple[str, Callable[[], dict[str, Any]]]] = [
                ("ragline_cli", lambda: _ragline(pages_dir, work / "r", _env(port, None))),
                ("llama_index_process", lambda: _llama(pages, work / "l", _env(port, None))),
            ]
            for workers in sweep:
                schedule.append(
                    (
                        f"ragline_cli_workers_{workers}",
                        lambda w=workers: _ragline(pages_dir, work / f"r{w}", _env(port, w)),
                    )
                )
            time.sleep(0.5)  # the embedding server binds
            _ragline(pages_dir, work / "warm", _env(port, None))  # untimed: bytecode caches
            _llama(pages[:1], work / "warm-l", _env(port, None))
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in schedule}
            for i in range(max(1, args.rounds)):
                for name, run in schedule if i % 2 == 0 else schedule[::-1]:
                    print(f"[{time.strftime('%H:%M:%S')}] {name} #{i + 1} (load {_load()})")
                    runs[name].append(run())
            report["runs"] = {name: _median(found) for name, found in runs.items()}
    finally:
        server.terminate()
        server.wait(timeout=10)
    medians = report["runs"]
    ours, peer = medians["ragline_cli"], medians["llama_index_process"]
    report["ratio_llama_over_ragline_wall"] = round(peer["seconds"] / ours["seconds"], 2)
    report["ratio_per_round"] = [
        round(p / r, 2) for p, r in zip(peer["runs_seconds"], ours["runs_seconds"], strict=True)
    ]
    report["target"] = "LlamaIndex wall / ragline wall >= 2.5 (issue 24 item 3)"
    report["machine"]["load_average_end"] = _load()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'run':<28} {'median s':>9} {'cpu s':>7} {'chunks':>7}  runs")
    for name, step in medians.items():
        print(
            f"{name:<28} {step['seconds']:>9} {step['cpu_seconds']:>7} {step['chunks']:>7}  "
            f"{step['runs_seconds']}"
        )
    print(f"LlamaIndex / ragline (wall): {report['ratio_llama_over_ragline_wall']} (target >= 2.5)")
    per_round = report["ratio_per_round"]
    print(f"per round: {per_round}; their median: {statistics.median(per_round)}")


if __name__ == "__main__":
    main()
