"""A changed file is ingested again and its chunks replace the old ones everywhere."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.e2e.conftest import EXAMPLES
from tests.e2e.ragline_process import (
    chunk_texts,
    document_id,
    ingest_counts,
    latest_runs,
    run,
    search_batch,
    summary_row,
)

NEW_TEA_GUIDE = """# Brewing Yerba Mate

Yerba mate is drunk from a hollow gourd through a metal straw called a bombilla. Fill the
gourd two thirds with leaves, tilt it, and wet the low side with cool water first; then pour
water at about seventy degrees into the hollow and sip. The gourd is refilled many times.
"""


def test_changed_file_is_reingested_and_replaces_its_chunks(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("tea-brewing-guide.md", "night-sky-observing.txt"):
        shutil.copy(EXAMPLES / name, docs / name)
    data_dir = tmp_path / "data"
    first = run(data_dir, "ingest", str(docs))
    assert first.returncode == 0, first.explain()
    assert any("sencha" in text for text in chunk_texts(data_dir))
    tea = docs / "tea-brewing-guide.md"
    first_task = latest_runs(data_dir)[document_id(tea)]["task_id"]

    tea.write_text(NEW_TEA_GUIDE, encoding="utf-8")
    second = run(data_dir, "ingest", str(docs))
    assert second.returncode == 0, second.explain()
    counts = ingest_counts(second)
    assert (counts.ingested, counts.unchanged, counts.failed) == (1, 1, 0), second.explain()
    assert "success" in summary_row(second, "tea-brewing-guide.md")
    assert "skipped" in summary_row(second, "night-sky-observing.txt")

    texts = chunk_texts(data_dir)
    assert not any("sencha" in text for text in texts), "old chunks of the changed file remain"
    assert any("bombilla" in text for text in texts)
    latest = latest_runs(data_dir)
    assert latest[document_id(tea)]["pipeline_status"] == "SUCCESS"
    assert latest[document_id(tea)]["task_id"] != first_task  # a new task, same document

    answers = dict(
        search_batch(
            data_dir,
            [
                ("new", "what is a bombilla for yerba mate"),
                ("old", "Japanese sencha cooler water short steep"),
                ("old-keyword", "sencha"),
            ],
            "--top-k",
            "10",
        )
    )
    assert answers["new"][0]["source"] == "tea-brewing-guide.md", answers["new"]
    assert "bombilla" in answers["new"][0]["text"]
    for query_id in ("old", "old-keyword"):
        stale = [h for h in answers[query_id] if "sencha" in h["text"] + h["parent_text"]]
        assert not stale, (query_id, stale)
    tea_hits = [h for hits in answers.values() for h in hits if h["source"] == tea.name]
    assert {h["doc_id"] for h in tea_hits} == {document_id(tea)}
