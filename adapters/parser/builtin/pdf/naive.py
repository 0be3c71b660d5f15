"""The `naive` PDF backend (the basic tier): pypdfium2 text layer with heading and paragraph
recovery, over the pages of a range; per-page Markdown for the parse cache."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from ragline.adapters.parser.builtin.pdf.layout import (
    Line,
    drop_page_furniture,
    outline_key,
    page_markdowns,
)
from ragline.adapters.parser.builtin.pdf.text_layer import open_pdf, page_lines
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
)
from ragline.domain.parse_batch import PageRange

NO_TEXT_LAYER = "no text layer (a scanned PDF: parse it at the quality tier, which OCRs it)"
MIN_USABLE_CHARS = 16
"""A page with fewer visible characters than this (a stamped page number, a scanner's
header) has no usable text layer: the quality tier OCRs it."""


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


def usable(lines: list[Line]) -> bool:
    """Enough real characters: not blank, not a page number, not replacement-char garbage."""
    chars = [c for line in lines for c in line.text if not c.isspace()]
    bad = sum(1 for c in chars if c == "\ufffd" or "\ue000" <= c <= "\uf8ff")
    return len(chars) >= MIN_USABLE_CHARS and bad * 10 < len(chars) * 3


def pages_of(page_range: PageRange | None, page_count: int) -> tuple[PageRange, list[str]]:
    """The range clamped to the document (a warning when cut); a range past the end fails."""
    if page_count == 0:
        raise InvalidFileContent("PDF has no pages")
    if page_range is None:
        return PageRange(1, page_count), []
    if page_range.first > page_count:
        raise ParseEngineFailed(f"page range {page_range} starts past the PDF's {page_count} pages")
    if page_range.last > page_count:
        cut = PageRange(page_range.first, page_count)
        return cut, [f"page range {page_range} cut to {cut} (the PDF has {page_count} pages)"]
    return page_range, []


@dataclass
class TextLayer:
    """What pdfium reads of the pages in range: positioned lines per page (0-based index)."""

    page_count: int
    pages: PageRange
    lines: dict[int, list[Line]] = field(default_factory=dict)
    heights: dict[int, float] = field(default_factory=dict)
    width: float = 612.0
    title: str | None = None
    outline: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def usable_pages(self) -> list[int]:
        return [index for index, lines in self.lines.items() if usable(lines)]

    def markdown_by_page(self, indices: list[int]) -> dict[int, str]:
        """Markdown of the given pages, furniture dropped across the whole range."""
        ordered = sorted(self.lines)
        kept = drop_page_furniture(
            [self.lines[i] for i in ordered], [self.heights[i] for i in ordered]
        )
        chosen = [page for index, page in zip(ordered, kept, strict=True) if index in indices]
        return page_markdowns(chosen, self.width, self.outline)


def read_text_layer(
    document: pdfium.PdfDocument, page_range: PageRange | None, max_output_chars: int
) -> TextLayer:
    page_count = len(document)
    pages, warnings = pages_of(page_range, page_count)
    layer = TextLayer(page_count=page_count, pages=pages, warnings=warnings)
    chars = 0
    for index in range(pages.first - 1, pages.last):
        try:
            lines, layer.width, height = page_lines(document, index)
        except pdfium.PdfiumError as exc:
            raise InvalidFileContent(f"corrupt PDF page {index + 1} ({exc})"[:300]) from None
        chars += sum(len(line.text) for line in lines)
        if chars > max_output_chars:
            raise ParseEngineFailed(f"PDF text exceeds {max_output_chars} characters")
        layer.lines[index] = lines
        layer.heights[index] = height
    layer.title = (document.get_metadata_value("Title") or "").strip() or None
    layer.outline = _outline_levels(document)
    return layer


def assemble(
    layer: TextLayer, by_page: dict[int, str], backend: str, warnings: list[str]
) -> ParsedDocument:
    """One ParsedDocument from per-page Markdown: `markdown` is the pages joined in order."""
    pages = tuple(
        by_page.get(index, "") for index in range(layer.pages.first - 1, layer.pages.last)
    )
    markdown = "\n".join(page for page in pages if page)
    title = layer.title
    if title is None:
        first = next((ln for ln in markdown.split("\n") if ln.startswith("#")), "")
        title = first.lstrip("#").strip() or None
    return ParsedDocument(
        markdown=markdown,
        title=title,
        page_count=layer.page_count,
        warnings=[*layer.warnings, *warnings],
        backend=backend,
        pages=pages,
    )


def parse_pdf_naive(
    source: Path, max_output_chars: int, page_range: PageRange | None = None
) -> ParsedDocument:
    document = open_pdf(source)
    try:
        layer = read_text_layer(document, page_range, max_output_chars)
    finally:
        document.close()
    with_text = [index for index, lines in layer.lines.items() if lines]
    if not with_text:
        raise NoTextLayer(NO_TEXT_LAYER)
    empty = len(layer.lines) - len(with_text)
    warnings = [f"{empty} of {len(layer.lines)} pages have no text layer"] if empty else []
    return assemble(layer, layer.markdown_by_page(with_text), "naive", warnings)
