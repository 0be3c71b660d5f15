"""The sample folder newcomers ingest first: every file parses into structured Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from tests.adapters.parsers.conftest import NAIVE, block_tokens, headings

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "docs"

EXPECTED = {
    "tea-brewing-guide.md": ("A Guide to Brewing Tea", "Oolong", "gongfu"),
    "night-sky-observing.txt": ("Observing the Night Sky: A Beginner's Notes", None, "Bortle"),
    "python-files-howto.html": (
        "HOWTO: Reading and Writing Files in Python",
        "Working with paths: pathlib",
        "os.replace",
    ),
    "sourdough-bread.docx": ("Baking Sourdough Bread at Home", "Method", "autolyse"),
    "printing-press-history.pdf": (
        "The History of the Printing Press",
        "Gutenberg's Invention",
        "Aldus Manutius",
    ),
    "taijiquan-zh.md": ("太极拳简介", "基本要领", "陈家沟"),
}
# Slides, sheets, tables, an e-book and a mail (examples/make_format_samples.py): shorter.
BUSINESS = {
    "composting-at-home.pptx": ("Composting at Home", "Greens and Browns", "wrung-out sponge"),
    "bicycle-maintenance.xlsx": ("Bicycle maintenance", "Tyre Pressure", "| 28 | 85 | 5.9 |"),
    "houseplant-care.csv": (None, None, "Water a snake plant every three weeks"),
    "sailing-knots.tsv": (None, None, "| Cleat hitch | Tie a boat to a cleat on the dock |"),
    "lighthouse-keeper.epub": (
        "The Lighthouse Keeper's Handbook",
        "Fog Signals",
        "two long blasts every minute",
    ),
    "office-move.eml": (
        "Office move to the fourth floor",
        "Attachment: parking-during-the-move.txt",
        "visitor car park on Mill Lane",
    ),
}
EXPECTED |= BUSINESS


def test_the_folder_has_every_format_and_a_chinese_file() -> None:
    assert {p.name for p in SAMPLES.iterdir()} == set(EXPECTED)
    assert {p.suffix for p in SAMPLES.iterdir()} >= {
        ".md", ".txt", ".html", ".docx", ".pdf", ".pptx", ".xlsx", ".csv", ".tsv", ".epub", ".eml",
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses_with_structure(sandbox: SandboxedParser, name: str) -> None:
    title, heading, phrase = EXPECTED[name]
    source = SAMPLES / name
    parsed = sandbox.parse(source, source.suffix[1:], NAIVE)
    assert parsed.title == title
    assert phrase in parsed.markdown
    assert len(parsed.markdown) > (400 if name in BUSINESS else 1000)
    if heading is not None:
        assert heading in [text for _, text in headings(parsed.markdown)]
    if name.endswith((".docx", ".html", ".md", ".pptx", ".xlsx", ".csv", ".tsv")):
        assert "table_open" in block_tokens(parsed.markdown)
