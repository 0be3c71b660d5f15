"""`ragline ingest` + `ragline search` as processes with RAGLINE_VECTOR_INDEX=pgvector on the
session's real PostgreSQL + pgvector server: the vectors land in its tables and the hit comes
back ranked by the dense and sparse retrievers, i.e. through pgvector."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from tests.e2e.ragline_process import assert_hit_shape, ingest_counts, run

TEA = """# Brewing green tea

Green tea wants water at about eighty degrees; boiling water scorches the leaves and makes
the cup bitter. Steep the leaves for two minutes, then pour the whole pot.
"""
BREAD = """# Sourdough

A sourdough starter is flour and water fermented by wild yeast. Feed it daily and bake when
it doubles within six hours.
"""


def test_ingest_and_search_on_pgvector(tmp_path: Path, pgvector_url: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "green-tea.md").write_text(TEA, encoding="utf-8")
    (docs / "sourdough.md").write_text(BREAD, encoding="utf-8")
    data_dir = tmp_path / "data"
    env = {"RAGLINE_VECTOR_INDEX": "pgvector", "RAGLINE_PGVECTOR_URL": pgvector_url}

    ingested = run(data_dir, "ingest", str(docs), env=env)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    counts = ingest_counts(ingested)
    assert (counts.ingested, counts.failed) == (2, 0), ingested.explain()

    with psycopg.connect(pgvector_url) as conn:
        dense, sparse = conn.execute(
            "SELECT count(*) FILTER (WHERE dense IS NOT NULL), count(*) FILTER (WHERE has_sparse)"
            " FROM ragline_chunks_points WHERE user_id = '1' AND dataset_id = '1'"
        ).fetchone() or (0, 0)
    assert dense >= 2 and sparse >= 2
    assert not (data_dir / "vectors").exists()  # nothing went to the embedded index

    done = run(data_dir, "search", "what water temperature for green tea", "--json",
               "--explain", "--top-k", "2", env=env)  # fmt: skip
    assert done.returncode == 0, done.explain()
    answer = json.loads(done.stdout)
    assert answer["degraded"] == [], answer
    top = answer["hits"][0]
    assert_hit_shape({k: v for k, v in top.items() if k != "explain"})
    assert top["source"] == "green-tea.md", answer
    ranks = top["explain"]["ranks"]
    assert ranks["dense"] == 1 and ranks["sparse"] == 1, ranks
