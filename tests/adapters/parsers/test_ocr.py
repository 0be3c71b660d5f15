"""The quality tier: OCR of scanned PDF pages and of images (tesseract, chi_sim + eng).

The scanned pages are rendered at test time (testing/files/scanned.py) and carry no text layer,
so every word asserted here was read by the OCR engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from ragline.adapters.ocr.tesseract import TesseractOcr
from ragline.adapters.ocr.tesseract.ocr import tidy
from ragline.adapters.parser.builtin.registry import ParserRegistry
from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.ocr import OcrFailed
from ragline.application.ports.parser import (
    NoTextLayer,
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from ragline.domain.parse_batch import PageRange, ParseTier
from ragline.testing.files.scanned import (
    EN_LINES,
    make_multiframe_tiff,
    make_scanned_image,
    make_scanned_pdf,
    render_page,
)

QUALITY = ParseOptions(pdf_parser_backend=PdfParserBackend.AUTO, tier=ParseTier.QUALITY)
BASIC = ParseOptions(pdf_parser_backend=PdfParserBackend.NAIVE, tier=ParseTier.BASIC)
ZH_WORDS = ("青藏高原", "冰川", "长江和黄河")
EN_WORDS = ("Lighthouse keepers", "whale oil", "spiral stairs")


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scanned_pdf(tmp_path_factory.mktemp("scan") / "scanned.pdf")


def test_tesseract_with_both_languages_is_installed() -> None:
    assert TesseractOcr().available()


def test_scanned_pdf_is_read_by_ocr_at_the_quality_tier(
    sandbox: SandboxedParser, scanned: Path
) -> None:
    parsed = sandbox.parse(scanned, "pdf", QUALITY)
    assert parsed.backend == "naive+tesseract"
    assert parsed.page_count == 2 and len(parsed.pages) == 2
    assert all(word in parsed.pages[0] for word in ZH_WORDS)
    assert all(word in parsed.pages[1] for word in EN_WORDS)
    assert parsed.markdown == "\n".join(parsed.pages)
    assert "OCR: 2 of 2 pages" in parsed.warnings
    assert " " not in parsed.pages[0].split("\n")[0]  # no spaces between CJK characters


def test_scanned_pdf_fails_as_no_text_layer_at_the_basic_tier(
    sandbox: SandboxedParser, scanned: Path
) -> None:
    with pytest.raises(NoTextLayer, match="no text layer"):
        sandbox.parse(scanned, "pdf", BASIC)
    auto_basic = ParseOptions(pdf_parser_backend=PdfParserBackend.AUTO, tier=ParseTier.BASIC)
    with pytest.raises(NoTextLayer):
        sandbox.parse(scanned, "pdf", auto_basic)


def test_a_page_range_ocrs_only_its_pages(registry: ParserRegistry, scanned: Path) -> None:
    options = ParseOptions(tier=ParseTier.QUALITY, page_range=PageRange(2, 2))
    parsed = registry.parse(scanned, "pdf", options)
    assert len(parsed.pages) == 1 and "Lighthouse keepers" in parsed.pages[0]
    assert "冰川" not in parsed.markdown
    with pytest.raises(ParseEngineFailed, match="starts past"):
        registry.parse(
            scanned, "pdf", ParseOptions(tier=ParseTier.QUALITY, page_range=PageRange(3, 4))
        )


def test_a_mixed_pdf_ocrs_only_the_page_without_text(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    image = tmp_path / "page.png"
    render_page(EN_LINES).save(image)
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "", 12)
    pdf.multi_cell(0, 6, "A typed page about tide tables and harbour charts. " * 5)
    pdf.add_page()
    pdf.image(str(image), x=0, y=0, w=210)
    source = tmp_path / "mixed.pdf"
    pdf.output(str(source))
    parsed = registry.parse(source, "pdf", QUALITY)
    assert parsed.backend == "naive+tesseract"
    assert "OCR: 1 of 2 pages" in parsed.warnings
    assert "tide tables" in parsed.pages[0] and "whale oil" in parsed.pages[1]


def test_force_ocr_reads_pages_that_have_text(registry: ParserRegistry, tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "", 16)
    pdf.multi_cell(0, 9, "Granite quarries supplied the cathedral builders.")
    source = tmp_path / "typed.pdf"
    pdf.output(str(source))
    options = ParseOptions(tier=ParseTier.QUALITY, docling_force_ocr=True)
    parsed = registry.parse(source, "pdf", options)
    assert parsed.backend == "naive+tesseract" and "Granite quarries" in parsed.markdown


def test_without_an_ocr_engine_the_quality_tier_fails_clearly(scanned: Path) -> None:
    from ragline.adapters.parser.builtin.registry import with_ocr

    registry = ParserRegistry(with_ocr(TesseractOcr(binary="no-such-tesseract")))
    with pytest.raises(ParseEngineFailed, match="no OCR engine is installed"):
        registry.parse(scanned, "pdf", QUALITY)
    with pytest.raises(OcrFailed, match="unavailable"):
        TesseractOcr(binary="no-such-tesseract").recognise(scanned, 5)


@pytest.mark.parametrize("suffix", ["png", "jpg", "jpeg", "tif", "tiff"])
def test_images_are_one_section_read_by_ocr(
    sandbox: SandboxedParser, tmp_path: Path, suffix: str
) -> None:
    source = make_scanned_image(tmp_path / f"notice.{suffix}")
    parsed = sandbox.parse(source, suffix, QUALITY)
    assert parsed.backend == "tesseract" and parsed.page_count == 1
    assert all(word in parsed.markdown for word in EN_WORDS)
    assert "#" not in parsed.markdown


def test_a_multiframe_tiff_is_one_section_per_frame(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = make_multiframe_tiff(tmp_path / "scans.tiff")
    parsed = registry.parse(source, "tiff", QUALITY)
    assert parsed.page_count == 2 and len(parsed.pages) == 2
    assert parsed.pages[0].startswith("## Page 1\n") and "冰川" in parsed.pages[0]
    assert parsed.pages[1].startswith("## Page 2\n") and "whale oil" in parsed.pages[1]
    second = registry.parse(
        source, "tiff", ParseOptions(tier=ParseTier.QUALITY, page_range=PageRange(2, 2))
    )
    assert second.pages == (parsed.pages[1],)


def test_images_at_the_basic_tier_and_wrong_bytes_fail_clearly(
    registry: ParserRegistry, tmp_path: Path
) -> None:
    source = make_scanned_image(tmp_path / "notice.png")
    with pytest.raises(NoTextLayer, match="quality tier"):
        registry.parse(source, "png", BASIC)
    renamed = tmp_path / "notice.jpg"
    renamed.write_bytes(source.read_bytes())
    with pytest.raises(UnsupportedFileType, match=r"PNG, not \.jpg"):
        registry.parse(renamed, "jpg", QUALITY)
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(b"not an image at all")
    with pytest.raises(UnsupportedFileType, match=r"not a readable \.png"):
        registry.parse(garbage, "png", QUALITY)


def test_tidy_joins_cjk_and_keeps_latin_spaces() -> None:
    assert tidy("青 藏 高 原 is high\n\n\n\nnext  ") == "青藏高原 is high\n\nnext"
