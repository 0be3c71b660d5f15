"""Read a PDF's text layer with pypdfium2 as positioned lines (text, font size, box, weight)."""

from __future__ import annotations

import ctypes
from collections import Counter
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from ragline.adapters.parser.builtin.pdf.layout import Line
from ragline.application.ports.parser import InvalidFileContent, ParseEngineFailed

# pdfium's verdicts on the bytes themselves (a retry cannot change them), vs file access and
# unknown errors, which stay engine failures.
_CONTENT_ERRORS = frozenset(
    {pdfium_c.FPDF_ERR_FORMAT, pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY}
)
_SKIP_CHARS = {"\r", "\x00", "\ufffe", "\ufeff"}
_HYPHENS = {"-", "\x02", "\u00ad"}


def open_pdf(source: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(source))
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            raise InvalidFileContent("encrypted PDF (password required)") from None
        if getattr(exc, "err_code", None) in _CONTENT_ERRORS or "format" in message.lower():
            raise InvalidFileContent(f"corrupt PDF ({message})"[:300]) from None
        raise ParseEngineFailed(f"unreadable PDF ({message})"[:300]) from None


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
    """Split the page text at pdfium's line breaks; about one native call per visible char."""
    raw = textpage.raw
    count = pdfium_c.FPDFText_CountChars(raw)
    text = textpage.get_text_range(0, count) if count > 0 else ""
    if len(text) != count:  # the text/char index mapping is off: read char by char instead
        codes = (pdfium_c.FPDFText_GetUnicode(raw, i) for i in range(count))
        text = "".join(chr(c) if 0 < c < 0x110000 else "\x00" for c in codes)
    lines: list[Line] = []
    start = 0
    while start < count:
        end = text.find("\n", start)
        end = count if end < 0 else end
        line = _line(raw, text, start, end, page_index)
        if line is not None:
            lines.append(line)
        start = end + 1
    return lines


def _line(raw: Any, text: str, start: int, end: int, page_index: int) -> Line | None:
    chars: list[str] = []
    sizes: Counter[float] = Counter()
    first = last = -1
    for i in range(start, end):
        char = text[i]
        if char in _HYPHENS and pdfium_c.FPDFText_IsHyphen(raw, i):
            char = "\u00ad"  # a soft hyphen at a line end: always joined away
        elif char in _SKIP_CHARS or (char < " " and char != "\t"):
            continue
        chars.append(char)
        if char.isspace():
            continue
        sizes[round(pdfium_c.FPDFText_GetFontSize(raw, i) * 2) / 2] += 1
        if first < 0:
            first = i
        last = i
    content = "".join(chars).strip()
    if first < 0 or not content:
        return None
    x0, y0a, _, y1a = _char_box(raw, first)
    _, y0b, x1, y1b = _char_box(raw, last)
    bold = _is_bold(raw, first) and _is_bold(raw, last)  # a bold lead-in is not a bold line
    size = sizes.most_common(1)[0][0]
    return Line(content, size, x0, min(y0a, y0b), x1, max(y1a, y1b), page_index, bold=bold)


def _char_box(raw: Any, index: int) -> tuple[float, float, float, float]:
    left, right = ctypes.c_double(), ctypes.c_double()
    bottom, top = ctypes.c_double(), ctypes.c_double()
    if not pdfium_c.FPDFText_GetCharBox(raw, index, left, right, bottom, top):
        return 0.0, 0.0, 0.0, 0.0
    return left.value, bottom.value, right.value, top.value


def _is_bold(raw: Any, index: int) -> bool:
    if pdfium_c.FPDFText_GetFontWeight(raw, index) >= 600:
        return True
    name = ctypes.create_string_buffer(128)
    length = pdfium_c.FPDFText_GetFontInfo(raw, index, name, 128, None)
    return b"bold" in name.raw[: max(0, min(length, 128) - 1)].lower()
