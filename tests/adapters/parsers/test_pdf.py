"""pdf: naive text-layer recovery, failure verdicts, and the opendataloader/mineru backends."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from fpdf.enums import XPos, YPos
from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.parser.builtin.pdf.layout import Line, join_lines, lines_to_markdown
from ragline.adapters.parser.builtin.pdf.naive import NO_TEXT_LAYER
from ragline.adapters.parser.builtin.pdf.opendataloader import jar_path
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
)
from ragline.domain.parse_batch import ParseTier
from ragline.testing.files.hostile import (
    ENCRYPTED_PDF_PASSWORD,
    ENCRYPTED_PDF_TEXT,
    blank_pdf,
    encrypted_pdf,
    text_pdf,
)
from tests.adapters.parsers.conftest import NAIVE, headings

SENTENCE = (
    "The screw press squeezed paper evenly onto inked metal type, and the result was a fall "
    "in the price of books that changed how knowledge moved across Europe. "
)


class _Report(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", "", 9)
        self.cell(0, 8, "Quarterly Review of Printing", new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", "", 9)
        self.cell(0, 10, f"Page {self.page_no()}", align="C")


def _write(pdf: FPDF, size: float, text: str, style: str = "", gap: float = 3) -> None:
    pdf.set_font("Helvetica", style, size)
    pdf.multi_cell(0, size * 0.5, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(gap)


def _report_pdf(path: Path) -> None:
    pdf = _Report()
    pdf.add_page()
    _write(pdf, 24, "Printing in Europe", "B")
    _write(pdf, 16, "The Mainz Workshop", "B")
    _write(pdf, 11, SENTENCE * 3)
    _write(pdf, 11, "A second paragraph about type founding. " * 4)
    _write(pdf, 11, "Key Inventions", "B")
    _write(pdf, 11, "- the hand mould\n- oil-based ink")
    _write(pdf, 16, "Venice and Beyond", "B")
    for _ in range(8):
        _write(pdf, 11, SENTENCE * 4)
    pdf.output(str(path))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    _report_pdf(path)
    return path


def test_headings_recovered_from_font_sizes_and_bold(
    registry: ParserRegistry, report: Path
) -> None:
    parsed = registry.parse(report, "pdf", NAIVE)
    assert headings(parsed.markdown) == [
        (1, "Printing in Europe"),
        (2, "The Mainz Workshop"),
        (3, "Key Inventions"),
        (2, "Venice and Beyond"),
    ]
    assert parsed.page_count is not None and parsed.page_count >= 2
    assert parsed.title == "Printing in Europe"
    assert "pdf backend: naive" in parsed.warnings


def test_wrapped_lines_join_into_paragraphs(registry: ParserRegistry, report: Path) -> None:
    markdown = registry.parse(report, "pdf", NAIVE).markdown
    paragraphs = markdown.split("\n\n")
    assert (SENTENCE * 3).strip() in paragraphs
    assert ("A second paragraph about type founding. " * 4).strip() in paragraphs
    assert "- the hand mould\n- oil-based ink" in markdown


def test_running_headers_and_page_numbers_are_dropped(
    registry: ParserRegistry, report: Path
) -> None:
    markdown = registry.parse(report, "pdf", NAIVE).markdown
    assert "Quarterly Review" not in markdown
    assert "Page 1" not in markdown and "Page 2" not in markdown


def test_join_lines_dehyphenates_and_joins_cjk() -> None:
    assert join_lines("the inter-", "national trade") == "the international trade"
    assert join_lines("soft hyph\u00ad", "enation") == "soft hyphenation"
    assert join_lines("Anglo-", "Saxon") == "Anglo-Saxon"
    assert join_lines("太极拳是中国", "传统武术") == "太极拳是中国传统武术"
    assert join_lines("end.", "Next") == "end. Next"


def test_layout_gap_splits_paragraphs() -> None:
    def line(text: str, top: float, size: float = 10.0) -> Line:
        return Line(text, size, 50, top - size, 500, top, page=0)

    lines = [
        line("Heading", 760, 18),
        line("first line of a paragraph that", 730),
        line("continues here.", 718),
        line("after a gap, a new one", 690),
    ]
    assert lines_to_markdown([lines], 612) == (
        "# Heading\n\nfirst line of a paragraph that continues here.\n\nafter a gap, a new one\n"
    )


def test_no_text_layer_is_a_clear_failure(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "scan.pdf"
    source.write_bytes(blank_pdf())
    with pytest.raises(NoTextLayer) as failure:
        registry.parse(source, "pdf", NAIVE)
    assert failure.value.reason == NO_TEXT_LAYER


def test_encrypted_pdf_fails_as_encrypted(registry: ParserRegistry, tmp_path: Path) -> None:
    source = tmp_path / "locked.pdf"
    source.write_bytes(encrypted_pdf())
    # The fixture is a genuine encrypted PDF: with the password pdfium reads its text.
    unlocked = pdfium.PdfDocument(str(source), password=ENCRYPTED_PDF_PASSWORD)
    assert unlocked[0].get_textpage().get_text_range() == ENCRYPTED_PDF_TEXT
    unlocked.close()
    with pytest.raises(InvalidFileContent, match=r"encrypted PDF \(password required\)"):
        registry.parse(source, "pdf", NAIVE)


@pytest.mark.parametrize("cut", [0, 9, 120, 300])
def test_truncated_pdf_fails_cleanly(registry: ParserRegistry, tmp_path: Path, cut: int) -> None:
    source = tmp_path / "cut.pdf"
    source.write_bytes(text_pdf("Hello there")[:cut])
    with pytest.raises(InvalidFileContent, match="PDF"):
        registry.parse(source, "pdf", NAIVE)


def test_mineru_is_remote_only(registry: ParserRegistry, report: Path) -> None:
    options = ParseOptions(pdf_parser_backend=PdfParserBackend.MINERU)
    with pytest.raises(ParseEngineFailed, match="the MinerU client parses these"):
        registry.parse(report, "pdf", options)


def test_force_ocr_is_ignored_at_the_basic_tier(registry: ParserRegistry, report: Path) -> None:
    options = ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE, docling_force_ocr=True)
    parsed = registry.parse(report, "pdf", options)
    assert "docling_force_ocr ignored: the basic tier never OCRs" in parsed.warnings
    assert parsed.backend == "naive"


needs_java = pytest.mark.skipif(jar_path() is None, reason="java or opendataloader-pdf missing")


@needs_java
def test_auto_prefers_opendataloader_when_every_page_has_text(
    registry: ParserRegistry, report: Path
) -> None:
    options = ParseOptions(pdf_parser_backend=PdfParserBackend.AUTO, tier=ParseTier.QUALITY)
    parsed = registry.parse(report, "pdf", options)
    assert parsed.backend == "opendataloader"
    assert parsed.page_count is not None and len(parsed.pages) == parsed.page_count
    assert parsed.markdown == "\n".join(page for page in parsed.pages if page)


@needs_java
def test_opendataloader_backend_parses_with_headings(
    registry: ParserRegistry, report: Path
) -> None:
    options = ParseOptions(pdf_parser_backend=PdfParserBackend.OPENDATALOADER)
    parsed = registry.parse(report, "pdf", options)
    assert "pdf backend: opendataloader" in parsed.warnings
    assert parsed.page_count is not None and parsed.page_count >= 2
    assert any(title == "The Mainz Workshop" for _, title in headings(parsed.markdown))
    assert any(title == "Printing in Europe" for _, title in headings(parsed.markdown))
    assert "type founding" in parsed.markdown


@needs_java
def test_opendataloader_sees_encryption_before_starting_the_jvm(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = tmp_path / "locked.pdf"
    source.write_bytes(encrypted_pdf())
    options = ParseOptions(pdf_parser_backend=PdfParserBackend.OPENDATALOADER)
    with pytest.raises(InvalidFileContent, match="encrypted PDF"):
        registry.parse(source, "pdf", options)


def test_bookmarks_name_headings_that_fonts_do_not(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    pdf = FPDF()
    pdf.add_page()
    for title, level in (("Chapter One", 0), ("Details", 1), ("Chapter Two", 0)):
        pdf.start_section(title, level=level)
        _write(pdf, 11, title, gap=4)  # same font as the body: only the outline says heading
        _write(pdf, 11, SENTENCE * 2)
    source = tmp_path / "outlined.pdf"
    pdf.output(str(source))
    markdown = registry.parse(source, "pdf", NAIVE).markdown
    assert headings(markdown) == [(1, "Chapter One"), (2, "Details"), (1, "Chapter Two")]


def test_mineru_with_a_url_still_fails_clearly(registry: ParserRegistry, report: Path) -> None:
    options = ParseOptions(
        pdf_parser_backend=PdfParserBackend.MINERU, mineru_url="http://127.0.0.1:9/obj"
    )
    with pytest.raises(ParseEngineFailed, match="the MinerU client parses these"):
        registry.parse(report, "pdf", options)


_LINES = st.lists(
    st.builds(
        Line,
        text=st.text(alphabet="ab -•1.。中文", min_size=1, max_size=20).filter(str.strip),
        size=st.sampled_from([9.0, 11.0, 11.0, 11.0, 16.0, 24.0]),
        x0=st.floats(0, 300),
        y0=st.floats(0, 780),
        x1=st.floats(300, 612),
        y1=st.floats(10, 792),
        page=st.integers(0, 3),
        bold=st.booleans(),
    ),
    max_size=30,
)


@given(_LINES)
def test_layout_never_loses_text_on_arbitrary_geometry(lines: list[Line]) -> None:
    pages = [[ln for ln in lines if ln.page == p] for p in range(4)]
    markdown = lines_to_markdown(pages, 612)
    squeezed = "".join(markdown.split())
    for line in lines:
        for word in line.text.replace("•", " ").split():
            assert word.strip("-.1") == "" or word.strip("-.") in squeezed.replace("\\", "")
