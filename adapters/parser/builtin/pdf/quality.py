"""The quality tier for PDFs (backend `auto`): layout-aware text plus OCR.

Every page in range is classified first. When all have a usable text layer and Java is
present, opendataloader parses them (backend ``opendataloader``). Otherwise pages with text
go through the naive layout recovery and the others through OCR (backend ``naive+tesseract``;
``naive`` when nothing needed OCR). `force_ocr` (the task's docling_force_ocr) OCRs every page.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from ragline.adapters.parser.builtin.pdf.naive import TextLayer, assemble, read_text_layer, usable
from ragline.adapters.parser.builtin.pdf.ocr_pages import ocr_page
from ragline.adapters.parser.builtin.pdf.opendataloader import jar_path, parse_pdf_opendataloader
from ragline.adapters.parser.builtin.pdf.text_layer import open_pdf
from ragline.application.ports.ocr import PageOcr
from ragline.application.ports.parser import (
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
)


def parse_pdf_quality(source: Path, options: ParseOptions, ocr: PageOcr | None) -> ParsedDocument:
    limits = options.limits
    document = open_pdf(source)
    try:
        layer = read_text_layer(document, options.page_range, limits.max_output_chars)
        scanned = sorted(
            index
            for index, lines in layer.lines.items()
            if options.docling_force_ocr or not usable(lines)
        )
        if scanned:
            by_page = _with_ocr(document, layer, scanned, ocr, limits.max_seconds)
    finally:
        document.close()
    if not scanned:
        if jar_path() is not None:
            return _opendataloader(source, options, layer)
        return assemble(layer, layer.markdown_by_page(list(layer.lines)), "naive", [])
    if not any(by_page.values()):
        raise NoTextLayer("no text found: no text layer, and OCR read nothing")
    assert ocr is not None  # narrows for mypy  # nosec B101
    warnings = [f"OCR: {len(scanned)} of {len(layer.lines)} pages"]
    return assemble(layer, by_page, f"naive+{ocr.engine}", warnings)


def _with_ocr(
    document: pdfium.PdfDocument,
    layer: TextLayer,
    scanned: list[int],
    ocr: PageOcr | None,
    timeout: float,
) -> dict[int, str]:
    """Markdown per page: the layout recovery for pages with text, OCR for `scanned` ones
    (a scanned page keeps its few text-layer lines when OCR reads nothing)."""
    if ocr is None or not ocr.available():
        raise ParseEngineFailed(
            f"{len(scanned)} of {len(layer.lines)} pages have no usable text layer and "
            "no OCR engine is installed (tesseract-ocr with chi_sim and eng)"
        )
    by_page = layer.markdown_by_page([i for i in layer.lines if i not in scanned])
    with tempfile.TemporaryDirectory(prefix="ragline-ocr-") as work_dir:
        for index in scanned:
            text = ocr_page(document, index, ocr, Path(work_dir), timeout)
            if text:
                by_page[index] = text
            elif index not in by_page and layer.lines[index]:
                by_page.update(layer.markdown_by_page([index]))
    return by_page


def _opendataloader(source: Path, options: ParseOptions, layer: TextLayer) -> ParsedDocument:
    with tempfile.TemporaryDirectory(prefix="ragline-odl-") as temp_dir:
        parsed = parse_pdf_opendataloader(source, options.limits, Path(temp_dir), layer.pages)
    return ParsedDocument(
        markdown=parsed.markdown,
        title=parsed.title,
        page_count=layer.page_count,
        warnings=[*layer.warnings, *parsed.warnings],
        backend="opendataloader",
        pages=parsed.pages,
    )
