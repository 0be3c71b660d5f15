"""Vector search at scale: `.venv/bin/python -m benchmarks.vector_scale [--max N]
[--engines embedded,qdrant-local,pgvector] [--qdrant-max N] [--single-scope]
[--sizes 10000,100000,...] [--out FILE]`.

A ladder of sizes (10k, 100k, 300k, 1M; up to --max) per engine, each size in its own
process (run.py): N points of 384 dimensions (clustered synthetic unit vectors, see data.py)
over 100 tenants; for the queried tenant (1% of the points) the VectorIndex port's
query_dense p50/p95 with recall@10 against exact search, query_sparse p50/p95 and
HybridSearch end to end; build time, disk, RSS. Qdrant local mode is brute force in Python
and stops at --qdrant-max. `--sparse-tenant-only` writes
sparse vectors for the queried tenant alone (a sparse query reads its own scope; the others'
would only add build time) and `--bulk` builds pgvector's HNSW index once after the load.
`--single-scope` runs the embedded index with all N points in one
tenant (its cost grows with the scope it scans, not the collection): where its p95 passes
100 ms is the doctor's advice threshold. Results merge into benchmarks/results/
vector_scale.json by (engine, layout, size), so a heavy size is run once; load averages are
recorded per run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "vector_scale.json"
LADDER = (10_000, 100_000, 300_000, 1_000_000)


def _child(engine: str, points: int, extra: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.vector_scale.run", engine, str(points), *extra]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT.parent)
    if done.returncode != 0:
        return {"engine": engine, "points": points, "error": done.stderr.strip()[-2000:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _row(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['engine']:<13}{r['points']:>9}  failed: {r['error'][-200:]}"
    hybrid = r.get("hybrid", {})
    return (
        f"{r['engine']:<13}{r['points']:>9}{r['tenants']:>5}{r['build_seconds']:>9}"
        f"{r['disk_mb']:>9}{r['peak_rss_mb']:>9}"
        f"{r['port_dense']['p50_ms']:>9}/{r['port_dense']['p95_ms']:<8}"
        f"{r['recall_at_10']:>7}"
        f"{hybrid.get('p50_ms', '-'):>9}/{hybrid.get('p95_ms', '-'):<8}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max", type=int, default=1_000_000)
    parser.add_argument("--sizes", default="", help="comma-separated sizes instead of the ladder")
    parser.add_argument("--engines", default="embedded,qdrant-local,pgvector")
    parser.add_argument("--qdrant-max", type=int, default=100_000)
    parser.add_argument("--single-scope", action="store_true")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--hybrid-queries", type=int, default=30)
    parser.add_argument("--bulk", action="store_true", help="pgvector: HNSW built after load")
    parser.add_argument(
        "--sparse-tenant-only",
        action="store_true",
        help="sparse vectors for the queried tenant only (others: dense only)",
    )
    parser.add_argument("--ef-sweep", default="", help="pgvector: ef_search values to try")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(LADDER)
    report: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {"runs": {}}
    report.update(
        benchmark="vector_scale",
        machine=machine_facts(),
        note="shared 2-core machine; other sessions ran at the same time (load per run)",
        setup=(__doc__ or "").split("\n\n")[1].replace("\n", " "),
    )
    layout = "single-scope" if args.single_scope else "100-tenants"
    extra = ["--queries", str(args.queries), "--hybrid-queries", str(args.hybrid_queries)]
    if args.single_scope:
        extra += ["--tenants", "1", "--no-hybrid"]
    if args.sparse_tenant_only:
        extra.append("--sparse-tenant-only")
        layout += "+sparse-tenant-only"
    print(
        f"{'engine':<13}{'points':>9}{'ten.':>5}{'build s':>9}{'disk MB':>9}{'RSS MB':>9}"
        f"{'port p50/p95 ms':>18}{'rec@10':>7}{'hybrid p50/p95':>18}"
    )
    for engine in args.engines.split(","):
        cap = min(args.max, args.qdrant_max) if engine == "qdrant-local" else args.max
        for points in (s for s in sizes if s <= cap):
            bulk = args.bulk and engine == "pgvector"
            sweep = ["--ef-sweep", args.ef_sweep] if args.ef_sweep and engine == "pgvector" else []
            result = _child(engine, points, extra + ["--bulk"] * bulk + sweep)
            result["timestamp_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            report["runs"][f"{engine}/{layout}{'+bulk' * bulk}/{points}"] = result
            if args.out.exists():  # another ladder may have written meanwhile: keep its runs
                report["runs"] = {**json.loads(args.out.read_text())["runs"], **report["runs"]}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=2) + "\n")
            print(_row(result), flush=True)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
