"""`ragline eval GOLD.jsonl` and `ragline search --explain`, driven as processes on the
ingested examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Ingested
from tests.e2e.ragline_process import assert_hit_shape, run, search_json

RETRIEVERS = {"dense", "sparse", "bm25", "fused", "final"}
FIGURES = {"R@1", "R@5", "R@10", "MRR@10", "nDCG@10"}

GOLD = [
    # answerable: the snippets are quoted from examples/docs
    {
        "id": "tea-water",
        "query": "why should I avoid reboiling the kettle for tea?",
        "relevant_snippet": "repeated boiling drives off dissolved oxygen",
    },
    {
        "id": "taiji-origin",
        "query": "太极拳最早是在哪里形成的？",
        "relevant_snippet": "河南温县陈家沟",
    },
    # no document holds this snippet: a miss by construction
    {
        "id": "absent",
        "query": "how do I brew green tea?",
        "relevant_snippet": "this sentence is in no document at all",
    },
]


def _gold(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def test_eval_scores_every_retriever_and_lists_the_misses(
    examples_ingested: Ingested, tmp_path: Path
) -> None:
    done = run(examples_ingested.data_dir, "eval", str(_gold(tmp_path, GOLD)), "--json")
    assert done.returncode == 0, done.explain()
    report = json.loads(done.stdout)
    assert report["questions"] == 3 and report["top_k"] == 10
    assert set(report["retrievers"]) == RETRIEVERS
    for name, figures in report["retrievers"].items():
        assert set(figures) == FIGURES, name
        assert all(0.0 <= v <= 1.0 for v in figures.values()), (name, figures)
    final = report["retrievers"]["final"]
    # two of three are answerable on this tiny corpus: at most 2/3, and both found in the top 10
    assert final["R@10"] == round(2 / 3, 4), report
    assert final["R@1"] <= final["R@5"] <= final["R@10"]
    assert [m["id"] for m in report["misses"]] == ["absent"]
    miss = report["misses"][0]
    assert miss["expected"] == "this sentence is in no document at all"
    assert miss["top_hit"]["source"] == "tea-brewing-guide.md", miss
    assert set(miss["ranks"]) == RETRIEVERS and set(miss["ranks"].values()) == {None}
    assert report["in_candidates"] == round(2 / 3, 4)
    # top_k 10 x 4 candidates: the pool is 40 deep, so recall is reported at 40 only
    assert report["candidate_recall"] == {
        name: {"40": report["candidate_recall"][name]["40"]} for name in ("dense", "sparse", "bm25")
    }
    pooled = [v["40"] for v in report["candidate_recall"].values()]
    assert max(pooled) > 0 and all(v <= report["in_candidates"] for v in pooled), report


def test_eval_reports_candidate_recall_at_each_depth_the_pool_reaches(
    examples_ingested: Ingested, tmp_path: Path
) -> None:
    done = run(
        examples_ingested.data_dir,
        "eval",
        str(_gold(tmp_path, GOLD)),
        "--json",
        "--top-k",
        "5",
        env={"RAGLINE_SEARCH_CANDIDATES": "50"},  # a pool of 250 per retriever
    )
    assert done.returncode == 0, done.explain()
    recall = json.loads(done.stdout)["candidate_recall"]
    assert set(recall) == {"dense", "sparse", "bm25"}
    for name, depths in recall.items():
        assert list(depths) == ["40", "100", "200", "250"], name
        # deeper never finds less; the absent snippet caps every depth at 2/3
        values = list(depths.values())
        assert values == sorted(values) and values[-1] <= round(2 / 3, 4), (name, depths)


def test_eval_by_document_id(examples_ingested: Ingested, tmp_path: Path) -> None:
    hits = search_json(examples_ingested.data_dir, "how to brew green tea", "--top-k", "1")
    tea_doc = hits[0]["doc_id"]
    gold = [{"id": "q", "query": "water temperature for green tea", "relevant_doc_ids": [tea_doc]}]
    done = run(examples_ingested.data_dir, "eval", str(_gold(tmp_path, gold)), "--json")
    assert done.returncode == 0, done.explain()
    report = json.loads(done.stdout)
    assert report["retrievers"]["final"]["R@1"] == 1.0
    assert report["retrievers"]["final"]["MRR@10"] == 1.0
    assert report["misses"] == []


def test_eval_table_output(examples_ingested: Ingested, tmp_path: Path) -> None:
    done = run(examples_ingested.data_dir, "eval", str(_gold(tmp_path, GOLD)))
    assert done.returncode == 0, done.explain()
    for word in ("dense", "sparse", "bm25", "fused", "final", "MRR@10", "nDCG@10", "absent"):
        assert word in done.stdout, done.stdout


def test_eval_refuses_a_bad_gold_file_naming_the_line(
    examples_ingested: Ingested, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "query": "q", "relevant_snippet": "s"}\n{"id": "2"}\n', "utf-8")
    done = run(examples_ingested.data_dir, "eval", str(bad))
    assert done.returncode != 0
    assert "bad.jsonl:2" in done.stderr, done.explain()
    both = tmp_path / "both.jsonl"
    both.write_text(
        '{"id": "1", "query": "q", "relevant_snippet": "s", "relevant_doc_ids": ["d"]}\n', "utf-8"
    )
    done = run(examples_ingested.data_dir, "eval", str(both))
    assert done.returncode != 0 and "exactly one of" in done.stderr, done.explain()


def test_search_explain_gives_each_hits_rank_per_retriever(examples_ingested: Ingested) -> None:
    rrf = {"RAGLINE_SEARCH_FUSION": "rrf", "RAGLINE_SEARCH_SPARSE_WEIGHT": "1"}
    rrf["RAGLINE_SEARCH_BM25_WEIGHT"] = "1"
    done = run(
        examples_ingested.data_dir,
        "search",
        "how to brew green tea",
        "--top-k",
        "3",
        "--json",
        "--explain",
        env=rrf,
    )
    assert done.returncode == 0, done.explain()
    hits = json.loads(done.stdout)["hits"]
    assert hits
    for hit in hits:
        assert_hit_shape({k: v for k, v in hit.items() if k != "explain"})
    for hit in hits:
        explain = hit["explain"]
        assert set(explain["ranks"]) == {"dense", "sparse", "bm25"}
        ranks = [r for r in explain["ranks"].values() if r is not None]
        assert ranks, hit  # a fused hit came from at least one retriever
        assert all(r >= 1 for r in ranks)
        # the fused score is the weighted reciprocal-rank sum of those ranks (weights 1, k 60)
        expected = sum(1 / (60 + r) for r in ranks)
        assert abs(explain["fused_score"] - expected) < 1e-9, hit
    plain = run(
        examples_ingested.data_dir, "search", "how to brew green tea", "--top-k", "3", "--json"
    )
    assert "explain" not in json.loads(plain.stdout)["hits"][0]
    # the defaults (standardised-score fusion) explain themselves too
    default = run(
        examples_ingested.data_dir, "search", "green tea", "--top-k", "3", "--json", "--explain"
    )
    assert default.returncode == 0, default.explain()
    for hit in json.loads(default.stdout)["hits"]:
        assert hit["explain"]["fused_score"] > 0.0
        assert any(r is not None for r in hit["explain"]["ranks"].values())
    shown = run(examples_ingested.data_dir, "search", "how to brew green tea", "--explain")
    assert shown.returncode == 0 and "fused" in shown.stdout and "dense #" in shown.stdout
