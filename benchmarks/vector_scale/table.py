"""The docs/benchmarks.md table from vector_scale JSON files:
`python -m benchmarks.vector_scale.table [FILE ...]` (default: the results file)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results" / "vector_scale.json"
HEADER = (
    "| engine | layout | points | queried scope | build s (dense + index + sparse) | disk MB"
    " | peak RSS MB (server) | port dense p50 / p95 ms | recall@10 | port sparse p50 / p95 ms"
    " | HybridSearch p50 / p95 ms | load 1m before / after |\n"
    "|---|---|---:|---:|---|---:|---:|---|---:|---|---|---|"
)


def row(key: str, r: dict[str, Any]) -> str:
    engine, layout, _ = key.split("/")
    if "error" in r:
        return f"| {engine} | {layout} | {r['points']:,} | failed: {r['error'][-80:]} |"
    build = (
        f"{r['build_seconds']} ({r['build_dense']['seconds']} + {r.get('index_seconds', 0)}"
        f" + {r['build_sparse']['seconds']})"
    )
    server = f" ({r['server_rss_mb']})" if r.get("server_rss_mb") else ""
    hybrid = r.get("hybrid")
    hybrid_cell = f"{hybrid['p50_ms']} / {hybrid['p95_ms']}" if hybrid else "-"
    dense, sparse = r["port_dense"], r["port_sparse"]
    return (
        f"| {engine} | {layout} | {r['points']:,} | {r['queried_tenant_points']:,} | {build}"
        f" | {r['disk_mb']} | {r['peak_rss_mb']}{server} | {dense['p50_ms']} / {dense['p95_ms']}"
        f" | {r['recall_at_10']} | {sparse['p50_ms']} / {sparse['p95_ms']} | {hybrid_cell}"
        f" | {r['load_before'][0]} / {r['load_after'][0]} |"
    )


def main() -> None:
    files = [Path(a) for a in sys.argv[1:]] or [RESULTS]
    runs: dict[str, Any] = {}
    for path in files:
        runs.update(json.loads(path.read_text())["runs"])
    order = {"embedded": 0, "qdrant-local": 1, "pgvector": 2}
    keys = sorted(runs, key=lambda k: (k.split("/")[1], order[k.split("/")[0]], runs[k]["points"]))
    print(HEADER)
    for key in keys:
        print(row(key, runs[key]))
    swept = [k for k in keys if runs[k].get("ef_sweep")]
    if swept:
        print(
            "\n| points | ef_search | port dense p50 / p95 ms | recall@10 |\n|---:|---:|---|---:|"
        )
    for key in swept:
        for ef, r in runs[key]["ef_sweep"].items():
            print(
                f"| {runs[key]['points']:,} | {ef} | {r['p50_ms']} / {r['p95_ms']}"
                f" | {r['recall_at_10']} |"
            )
        pool = runs[key].get("port_dense_pool")
        if pool:
            print(
                f"| {runs[key]['points']:,} | 40, limit {pool['limit']} (HybridSearch's pool)"
                f" | {pool['p50_ms']} / {pool['p95_ms']} | - |"
            )


if __name__ == "__main__":
    main()
