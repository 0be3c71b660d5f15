"""`ragline ingest` on the shipped examples, then `ragline search` (text, --json, --batch)."""

from __future__ import annotations

from tests.e2e.conftest import EXAMPLES, Ingested
from tests.e2e.ragline_process import (
    ingest_counts,
    latest_runs,
    run,
    search_batch,
    search_json,
    summary_row,
)

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir())
EXAMPLE_COUNT = len(EXAMPLE_NAMES)  # md, txt, html, docx, pdf, Chinese md, pptx, xlsx, ...


def test_ingest_of_the_examples_succeeds_for_every_format(examples_ingested: Ingested) -> None:
    first = examples_ingested.first
    assert first.returncode == 0, first.explain()
    assert not first.left_running, "a parser worker outlived `ragline ingest`"
    counts = ingest_counts(first)
    assert (counts.ingested, counts.unchanged, counts.failed) == (EXAMPLE_COUNT, 0, 0), (
        first.explain()
    )
    assert counts.chunks > EXAMPLE_COUNT
    for name in EXAMPLE_NAMES:
        row = summary_row(first, name)
        assert "success" in row, row
    latest = latest_runs(examples_ingested.data_dir)
    tenant1 = [r for r in latest.values() if r["user_id"] == "1"]
    assert len(tenant1) == EXAMPLE_COUNT
    assert {r["pipeline_status"] for r in tenant1} == {"SUCCESS"}


def test_english_question_finds_the_tea_guide(examples_ingested: Ingested) -> None:
    hits = search_json(examples_ingested.data_dir, "how to brew green tea", "--top-k", "3")
    assert 1 <= len(hits) <= 3
    top = hits[0]
    assert top["source"] == "tea-brewing-guide.md", hits
    assert "tea" in top["text"].lower()
    assert any("green tea" in h["text"].lower() for h in hits), hits
    assert top["text"] in top["parent_text"] or top["parent_text"] == "", top
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert len({h["chunk_id"] for h in hits}) == len(hits)


def test_chinese_question_finds_the_taijiquan_page(examples_ingested: Ingested) -> None:
    hits = search_json(examples_ingested.data_dir, "太极拳练习时应该怎样呼吸？")
    assert hits and len(hits) <= 5
    top = hits[0]
    assert top["source"] == "taijiquan-zh.md", hits
    assert "呼吸" in top["text"], top
    assert top["section_path"][0] == "太极拳简介", top


def test_batch_answers_one_line_per_query_in_order(examples_ingested: Ingested) -> None:
    queries = [
        ("q-py", "how do I open a file for writing in Python"),
        ("q-zh", "太极拳有哪些流派？"),
        ("q-bread", "how long should sourdough dough ferment"),
        ("q-press", "who invented the movable type printing press"),
        ("q-sky", "what do I need for stargazing at night"),
        ("q-py-again", "how do I open a file for writing in Python"),
    ]
    answers = search_batch(examples_ingested.data_dir, queries, "--top-k", "2")
    assert [i for i, _ in answers] == [i for i, _ in queries]
    expected = {
        "q-py": "python-files-howto.html",
        "q-zh": "taijiquan-zh.md",
        "q-bread": "sourdough-bread.docx",
        "q-press": "printing-press-history.pdf",
        "q-sky": "night-sky-observing.txt",
        "q-py-again": "python-files-howto.html",
    }
    for query_id, hits in answers:
        assert 1 <= len(hits) <= 2, (query_id, hits)
        assert hits[0]["source"] == expected[query_id], (query_id, hits)
    by_id = dict(answers)
    assert [h["chunk_id"] for h in by_id["q-py"]] == [h["chunk_id"] for h in by_id["q-py-again"]]
    assert any("流派" in h["text"] for h in by_id["q-zh"]), by_id["q-zh"]


def test_reingesting_the_unchanged_folder_skips_every_file(examples_ingested: Ingested) -> None:
    before = latest_runs(examples_ingested.data_dir)
    again = run(examples_ingested.data_dir, "ingest", str(examples_ingested.docs))
    assert again.returncode == 0, again.explain()
    counts = ingest_counts(again)
    assert (counts.ingested, counts.unchanged, counts.failed) == (0, EXAMPLE_COUNT, 0), (
        again.explain()
    )
    for name in EXAMPLE_NAMES:
        assert "skipped" in summary_row(again, name)
    assert latest_runs(examples_ingested.data_dir) == before  # no new run, nothing touched
