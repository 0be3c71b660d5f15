"""The `naive` PDF backend: pypdfium2 text layer with heading and paragraph recovery."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from ragline.adapters.parsers.pdf.layout import (
    Line,
    drop_page_furniture,
    lines_to_markdown,
    outline_key,
)
from ragline.adapters.parsers.pdf.text_layer import open_pdf, page_lines
from ragline.application.ports.parser import InvalidFileContent, ParsedDocument, ParseEngineFailed

NO_TEXT_LAYER = "no text layer (scanned PDF; OCR backend not configured)"


def _outline_levels(document: pdfium.PdfDocument) -> dict[str, int]:
    """Bookmark titles -> heading levels (depth + 1, at most 6), when the PDF has an outline."""
    levels: dict[str, int] = {}
    try:
        for index, item in enumerate(document.get_toc(max_depth=6)):
            if index >= 5000:
                break
            key = outline_key(item.get_title() or "")
            if key and key not in levels:
                levels[key] = min(item.level + 1, 6)
    except (pdfium.PdfiumError, AttributeError, ValueError):
        return {}
    return levels


def parse_pdf_naive(source: Path, max_output_chars: int) -> ParsedDocument:
    document = open_pdf(source)
    try:
        page_count = len(document)
        pages: list[list[Line]] = []
        heights: list[float] = []
        width = 612.0
        chars = 0
        for index in range(page_count):
            try:
                lines, width, height = page_lines(document, index)
            except pdfium.PdfiumError as exc:
                raise InvalidFileContent(f"corrupt PDF page {index + 1} ({exc})"[:300]) from None
            chars += sum(len(line.text) for line in lines)
            if chars > max_output_chars:
                raise ParseEngineFailed(f"PDF text exceeds {max_output_chars} characters")
            pages.append(lines)
            heights.append(height)
        title = (document.get_metadata_value("Title") or "").strip() or None
        outline = _outline_levels(document)
    finally:
        document.close()
    if page_count == 0:
        raise InvalidFileContent("PDF has no pages")
    if chars == 0:
        raise ParseEngineFailed(NO_TEXT_LAYER)
    markdown = lines_to_markdown(drop_page_furniture(pages, heights), width, outline)
    if title is None:
        first = next((ln for ln in markdown.split("\n") if ln.startswith("#")), "")
        title = first.lstrip("#").strip() or None
    empty_pages = sum(1 for page in pages if not page)
    warnings = [f"{empty_pages} of {page_count} pages have no text layer"] if empty_pages else []
    return ParsedDocument(markdown=markdown, title=title, page_count=page_count, warnings=warnings)
