"""Read a PDF's text layer with pypdfium2 as positioned lines (text, font size, box, weight)."""

from __future__ import annotations

import ctypes
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from ragline.adapters.parsers.pdf.layout import Line
from ragline.application.ports.parser import ParseEngineFailed

_SKIP_CHARS = {"\r", "\x00", "\ufffe", "\ufeff"}


def open_pdf(source: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(source))
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            raise ParseEngineFailed("encrypted PDF (password required)") from None
        raise ParseEngineFailed(f"corrupt or unreadable PDF ({message})"[:300]) from None


def page_lines(document: pdfium.PdfDocument, index: int) -> tuple[list[Line], float, float]:
    """Lines of one page in reading order as pdfium emits them, plus the page width/height."""
    page = document[index]
    try:
        width, height = page.get_size()
        textpage = page.get_textpage()
        try:
            return _lines(textpage, index), width, height
        finally:
            textpage.close()
    finally:
        page.close()


def _lines(textpage: pdfium.PdfTextPage, page_index: int) -> list[Line]:
    raw = textpage.raw
    left, right = ctypes.c_double(), ctypes.c_double()
    bottom, top = ctypes.c_double(), ctypes.c_double()
    lines: list[Line] = []
    chars: list[str] = []
    sizes: Counter[float] = Counter()
    bold = 0
    font_bold: bool | None = None  # from the first visible char's font name
    name = ctypes.create_string_buffer(128)
    box = [float("inf"), float("inf"), float("-inf"), float("-inf")]  # x0, y0, x1, y1

    def close_line() -> None:
        nonlocal chars, sizes, bold, box, font_bold
        text = "".join(chars).strip()
        if text:
            size = sizes.most_common(1)[0][0] if sizes else 0.0
            visible = sum(sizes.values())
            lines.append(
                Line(text, size, box[0], box[1], box[2], box[3], page_index,
                     bold=bool(font_bold) or (visible > 0 and bold * 2 > visible))
            )  # fmt: skip
        chars, sizes, bold, font_bold = [], Counter(), 0, None
        box = [float("inf"), float("inf"), float("-inf"), float("-inf")]

    for i in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, i)
        char = chr(code) if 0 < code < 0x110000 else ""
        if char == "\n":
            close_line()
            continue
        if pdfium_c.FPDFText_IsHyphen(raw, i):
            char = "\u00ad"  # a soft hyphen at a line end: always joined away
        if not char or char in _SKIP_CHARS or (char < " " and char != "\t"):
            continue
        chars.append(char)
        if char.isspace() or pdfium_c.FPDFText_IsGenerated(raw, i):
            continue
        sizes[round(pdfium_c.FPDFText_GetFontSize(raw, i) * 2) / 2] += 1
        if font_bold is None:
            length = pdfium_c.FPDFText_GetFontInfo(raw, i, name, 128, None)
            font_bold = b"bold" in name.raw[: max(0, length - 1)].lower()
        if pdfium_c.FPDFText_GetFontWeight(raw, i) >= 600:
            bold += 1
        if pdfium_c.FPDFText_GetCharBox(raw, i, left, right, bottom, top):
            box[0] = min(box[0], left.value)
            box[1] = min(box[1], bottom.value)
            box[2] = max(box[2], right.value)
            box[3] = max(box[3], top.value)
    close_line()
    return lines
