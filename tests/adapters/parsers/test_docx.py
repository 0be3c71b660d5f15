"""docx: headings from styles, lists, tables in body order; zip bombs refused unopened."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import InvalidFileContent
from ragline.testing.files.hostile import zip_bomb_docx
from tests.adapters.parsers.conftest import NAIVE, block_tokens, headings


def _build(path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Printing press", style="Title")
    document.add_heading("Origins", level=1)
    document.add_paragraph("Gutenberg built a press around 1440.")
    document.add_paragraph("# not a heading, just text")
    document.add_paragraph("Movable type", style="List Bullet")
    document.add_paragraph("Oil-based ink", style="List Bullet")
    document.add_paragraph("Lead alloy", style="List Bullet 2")
    table = document.add_table(rows=2, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Year", "Event", "Place"), strict=True):
        cell.text = text
    for cell, text in zip(table.rows[1].cells, ("1455", "Bible | printed", "Mainz"), strict=True):
        cell.text = text
    document.add_heading("Spread", level=2)
    document.add_paragraph("Count the presses", style="List Number")
    document.add_paragraph("Count the towns", style="List Number")
    # A localized heading style ("标题 1"), recognised by its outline level, not its name.
    style = document.styles.add_style("标题 1", WD_STYLE_TYPE.PARAGRAPH)
    ppr = style.element.get_or_add_pPr()
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), "0")
    ppr.append(outline)
    document.add_paragraph("中文标题", style="标题 1")
    document.add_paragraph("正文段落。")
    document.save(str(path))


@pytest.fixture
def markdown(registry: ParserRegistry, tmp_path: Path) -> str:
    source = tmp_path / "press.docx"
    _build(source)
    parsed = registry.parse(source, "docx", NAIVE)
    assert parsed.title == "Printing press"
    return parsed.markdown


def test_headings_from_styles_and_outline_levels(markdown: str) -> None:
    assert headings(markdown) == [
        (1, "Printing press"),
        (2, "Origins"),
        (3, "Spread"),
        (2, "中文标题"),
    ]


def test_lists_bullets_nesting_and_numbers(markdown: str) -> None:
    assert "- Movable type\n- Oil-based ink\n   - Lead alloy" in markdown
    assert "1. Count the presses\n2. Count the towns" in markdown


def test_table_in_document_order_as_gfm(markdown: str) -> None:
    table = "| Year | Event | Place |\n| --- | --- | --- |\n| 1455 | Bible \\| printed | Mainz |"
    assert table in markdown
    assert markdown.index("Lead alloy") < markdown.index("| Year") < markdown.index("## Spread")
    assert block_tokens(markdown).count("table_open") == 1


def test_body_text_is_escaped_not_structure(markdown: str) -> None:
    assert "\\# not a heading, just text" in markdown


def test_zip_bomb_is_refused_from_the_central_directory(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = tmp_path / "bomb.docx"
    source.write_bytes(zip_bomb_docx(inflated_bytes=32 * 1024**2))
    with pytest.raises(InvalidFileContent, match="zip bomb suspected in docx"):
        registry.parse(source, "docx", NAIVE)


def test_total_uncompressed_budget(tmp_path: Path) -> None:
    source = tmp_path / "big.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("a.bin", b"x" * 4096, zipfile.ZIP_STORED)
        archive.writestr("b.bin", b"y" * 4096, zipfile.ZIP_STORED)
    check_zip(source, ZipBudget(max_total_uncompressed=8192), "docx")
    with pytest.raises(InvalidFileContent, match="8192 bytes uncompressed"):
        check_zip(source, ZipBudget(max_total_uncompressed=8191), "docx")


def test_not_a_zip_fails_cleanly(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "fake.docx"
    source.write_text("plain text")
    with pytest.raises(InvalidFileContent, match=r"not a DOCX \(not a zip container\)"):
        registry.parse(source, "docx", NAIVE)


def test_zip_without_word_document_fails_cleanly(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "other.docx"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(InvalidFileContent, match="docx"):
        registry.parse(source, "docx", NAIVE)
