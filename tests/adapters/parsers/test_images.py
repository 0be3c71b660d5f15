"""Images a document carries (PDF, DOCX) come back with ParsedDocument.images and are linked
from the Markdown, only when extract_images is asked; a scan's page image is not one."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from PIL import Image

from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.application.ports.parser import ParseOptions, PdfParserBackend
from ragline.domain.parse_batch import ParseTier
from ragline.testing.files.scanned import make_scanned_pdf

WITH_IMAGES = ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE, extract_images=True)


def _chart(path: Path) -> Path:
    image = Image.new("RGB", (120, 80), (200, 30, 30))
    image.save(path)
    return path


@pytest.fixture
def pdf_with_a_chart(tmp_path: Path) -> Path:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "", 12)
    pdf.multi_cell(0, 6, "Rainfall rose sharply in the third quarter, as the chart shows.")
    pdf.image(str(_chart(tmp_path / "chart.png")), x=20, y=60, w=60)
    source = tmp_path / "report.pdf"
    pdf.output(str(source))
    return source


def test_pdf_images_are_returned_and_linked_on_their_page(
    registry: ParserRegistry, pdf_with_a_chart: Path
) -> None:
    parsed = registry.parse(pdf_with_a_chart, "pdf", WITH_IMAGES)
    assert list(parsed.images) == ["images/page-1-1.png"]
    assert Image.open(io.BytesIO(parsed.images["images/page-1-1.png"])).size == (120, 80)
    assert parsed.pages[0].endswith("![](images/page-1-1.png)\n")
    assert parsed.markdown == "\n".join(parsed.pages)
    plain = registry.parse(
        pdf_with_a_chart, "pdf", ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE)
    )
    assert plain.images == {} and "![](" not in plain.markdown


def test_a_scanned_page_is_ocred_not_returned_as_an_image(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = make_scanned_pdf(tmp_path / "scan.pdf")
    options = ParseOptions(tier=ParseTier.QUALITY, extract_images=True)
    parsed = registry.parse(source, "pdf", options)
    assert parsed.images == {} and "冰川" in parsed.markdown


def test_docx_pictures_are_returned_and_linked_where_they_stand(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    document = docx.Document()
    document.add_paragraph("Before the picture.")
    document.add_picture(str(_chart(tmp_path / "chart.png")))
    document.add_paragraph("After the picture.")
    source = tmp_path / "pictures.docx"
    document.save(str(source))
    parsed = registry.parse(source, "docx", ParseOptions(extract_images=True))
    assert list(parsed.images) == ["images/docx-1.png"] and parsed.backend == "python-docx"
    assert parsed.markdown.index("Before") < parsed.markdown.index("![](images/docx-1.png)")
    assert parsed.markdown.index("![](images/docx-1.png)") < parsed.markdown.index("After")
    plain = registry.parse(source, "docx", ParseOptions())
    assert plain.images == {} and "![](" not in plain.markdown
