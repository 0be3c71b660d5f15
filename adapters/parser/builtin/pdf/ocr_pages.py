"""OCR of pages without a usable text layer: rasterise with pdfium, read with PageOcr, and
turn the text into Markdown paragraphs (plain text stays plain: block markers escaped)."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.pdf.layout import join_lines
from ragline.application.ports.ocr import OcrFailed, PageOcr
from ragline.application.ports.parser import ParseEngineFailed

OCR_DPI = 200
MAX_PIXELS = 40_000_000
"""A page bigger than this at OCR_DPI (a poster, a hostile MediaBox) is rendered smaller."""


def rasterise(document: pdfium.PdfDocument, index: int, target: Path) -> Path:
    """Page `index` (0-based) as a greyscale PNG at OCR_DPI (less for huge pages)."""
    page = document[index]
    try:
        width, height = page.get_size()
        scale = OCR_DPI / 72
        pixels = width * scale * height * scale
        if pixels > MAX_PIXELS:
            scale *= (MAX_PIXELS / pixels) ** 0.5
        bitmap = page.render(scale=scale, grayscale=True)
        try:
            bitmap.to_pil().save(target, "PNG")
        finally:
            bitmap.close()
    except pdfium.PdfiumError as exc:
        raise ParseEngineFailed(f"cannot render PDF page {index + 1} ({exc})"[:300]) from None
    finally:
        page.close()
    return target


def text_to_markdown(text: str) -> str:
    """OCR lines -> paragraphs: lines of one block are joined (no space between CJK), blocks
    are separated by a blank line; Markdown markers at a line start are escaped."""
    paragraphs: list[str] = []
    for block in text.split("\n\n"):
        joined = ""
        for line in block.splitlines():
            if line.strip():
                joined = join_lines(joined, line.strip())
        if joined:
            paragraphs.append(escape_block_markers(joined))
    return "\n\n".join(paragraphs) + "\n" if paragraphs else ""


def ocr_page(
    document: pdfium.PdfDocument, index: int, ocr: PageOcr, work_dir: Path, timeout: float
) -> str:
    """Markdown of page `index` read by OCR ("" for a blank page)."""
    image = rasterise(document, index, work_dir / f"page-{index + 1}.png")
    try:
        return text_to_markdown(ocr.recognise(image, timeout))
    except OcrFailed as exc:
        raise ParseEngineFailed(f"OCR of page {index + 1}: {exc.reason}"[:300]) from None
    finally:
        image.unlink(missing_ok=True)
