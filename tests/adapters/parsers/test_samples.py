"""The sample folder newcomers ingest first: every file parses into structured Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.parsers.sandbox import SandboxedParser
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


def test_the_folder_has_every_format_and_a_chinese_file() -> None:
    assert {p.name for p in SAMPLES.iterdir()} == set(EXPECTED)
    assert {p.suffix for p in SAMPLES.iterdir()} >= {".md", ".txt", ".html", ".docx", ".pdf"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses_with_structure(sandbox: SandboxedParser, name: str) -> None:
    title, heading, phrase = EXPECTED[name]
    source = SAMPLES / name
    parsed = sandbox.parse(source, source.suffix[1:], NAIVE)
    assert parsed.title == title
    assert phrase in parsed.markdown
    assert len(parsed.markdown) > 1000
    if heading is not None:
        assert heading in [text for _, text in headings(parsed.markdown)]
    if name.endswith((".docx", ".html", ".md")):
        assert "table_open" in block_tokens(parsed.markdown)
