"""Vector index benchmark: `.venv/bin/python -m benchmarks.vector [--points N]
[--qdrant-points M] [--queries Q] [--engines embedded,qdrant-local]`.

Per engine, in its own process (benchmarks/vector/run.py): N points of dimension 384 written
into one scope with upsert_dense (batches of 64, VECTORIZING's default), then a ~60-term
sparse vector for each with upsert_sparse (batches of 256, SPARSE_VECTORIZING's default);
then Q dense and Q sparse queries (limit 20). Reports points/s per upsert, query p50/p95
(warm: the first query, which loads the scope, is reported on its own), RSS every 10k points
and peak RSS (VmHWM). EmbeddedVectorIndex vs QdrantVectorIndex in local mode (`path=`), the
embedded default it replaces; Qdrant may run on fewer points (`--qdrant-points`), which the
JSON then says. Writes benchmarks/results/vector.json and prints a table.
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
RESULTS = ROOT / "results" / "vector.json"


def _child(engine: str, points: int, queries: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.vector.run", engine, str(points)]
    command += ["--queries", str(queries)]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT.parent)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=50_000)
    parser.add_argument("--qdrant-points", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--qdrant-queries", type=int, default=20)
    parser.add_argument("--engines", default="embedded,qdrant-local")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "benchmark": "vector",
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine_facts(),
        "note": "shared 2-core machine; other work ran at the same time",
        "setup": {
            "scope": "one (user_id, dataset_id)",
            "dimension": 384,
            "dense": "random unit vectors as lists of floats (what an Embedder returns)",
            "sparse": "~60 distinct hashed uint32 term ids per point, Zipf-like over 50k terms"
            ", weights 0.4-2.0; queries: 8 distinct terms of weight 1",
            "batches": {"upsert_dense": 64, "upsert_sparse": 256},
            "query_limit": 20,
            "timing": "only the awaited adapter calls; first query (loads the scope) apart",
        },
        "results": {},
    }
    for engine in args.engines.split(","):
        qdrant = engine == "qdrant-local"
        points = args.qdrant_points if qdrant else args.points
        queries = args.qdrant_queries if qdrant else args.queries
        result = _child(engine, points, queries)
        if points != args.points:
            result["note"] = f"run on {points} points, not {args.points}: too slow for more"
        report["results"][engine] = result
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{'engine':<14}{'points':>8}{'dense pts/s':>13}{'sparse pts/s':>14}"
        f"{'dense p50/p95 ms':>19}{'sparse p50/p95 ms':>20}{'peak RSS MB':>13}"
    )
    for engine, r in report["results"].items():
        dense_q, sparse_q = r["query_dense"], r["query_sparse"]
        print(
            f"{engine:<14}{r['points']:>8}{r['upsert_dense']['points_per_s']:>13,}"
            f"{r['upsert_sparse']['points_per_s']:>14,}"
            f"{dense_q['p50_ms']:>11}/{dense_q['p95_ms']:<7}"
            f"{sparse_q['p50_ms']:>12}/{sparse_q['p95_ms']:<7}{r['peak_rss_mb']:>13}"
        )
    print(f"written: {RESULTS}")


if __name__ == "__main__":
    main()
