"""The slide deck, workbook, CSV, TSV, e-book and mail in examples/docs, through `ragline
ingest`: each is found by a phrase in it, and the hit carries the section path that the
format's own structure gives (slide title, sheet name, chapter, subject / attachment)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Ingested
from tests.e2e.ragline_process import search_batch

SUBJECT = "Office move to the fourth floor"
# query id -> (question, expected source, expected section path, text the hit must hold)
CASES: dict[str, tuple[str, str, list[str], str]] = {
    "pptx": (
        "what ratio of browns to greens should a compost heap have",
        "composting-at-home.pptx",
        ["Greens and Browns"],
        "three parts browns",
    ),
    "pptx-notes": (
        "what should finished compost smell of",
        "composting-at-home.pptx",
        ["Greens and Browns", "Speaker notes"],
        "forest floor",
    ),
    "xlsx": (
        "when should I replace the bicycle chain",
        "bicycle-maintenance.xlsx",
        ["Maintenance"],
        "| Component | Interval (km) | Task |",
    ),
    "csv": (
        "how often should I water a snake plant",
        "houseplant-care.csv",
        [],
        "| Plant | Light | Watering | Notes |",
    ),
    "tsv": (
        "which knot ties a boat to a cleat on the dock",
        "sailing-knots.tsv",
        [],
        "| Knot | Use | Difficulty |",
    ),
    "epub": (
        "how did a lighthouse fog signal warn ships",
        "lighthouse-keeper.epub",
        ["Fog Signals"],
        "fog signal",
    ),
    "eml": (
        "on which day does the office move to the fourth floor",
        "office-move.eml",
        [SUBJECT],
        "Friday 14 March",
    ),
    "eml-attachment": (
        "where should staff park their cars during the office move",
        "office-move.eml",
        [SUBJECT, "Attachment: parking-during-the-move.txt"],
        "Mill Lane",
    ),
}


@pytest.fixture(scope="module")
def answers(examples_ingested: Ingested) -> dict[str, list[dict[str, object]]]:
    queries = [(key, case[0]) for key, case in CASES.items()]
    return dict(search_batch(examples_ingested.data_dir, queries, "--top-k", "3"))


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_format_is_found_with_its_section_path(
    answers: dict[str, list[dict[str, object]]], key: str
) -> None:
    _question, source, section_path, text = CASES[key]
    hits = answers[key]
    assert hits, key
    top = hits[0]
    assert top["source"] == source, hits
    matching = [h for h in hits if h["source"] == source and text in str(h["text"])]
    assert matching, hits
    assert matching[0]["section_path"] == section_path, matching[0]
