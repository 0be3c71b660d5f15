"""Positioned text lines -> Markdown: headings by font size, paragraphs by geometry.

Pure functions over `Line` records, so the heuristics are testable without a PDF.
- body size = the font size carrying most characters; bigger short lines are headings, one
  level per distinct size (largest = `#`); short bold body-size lines standing alone are the
  lowest heading level;
- wrapped lines join into paragraphs; a paragraph ends at a vertical gap clearly larger than
  the usual line gap, or after a short line ending a sentence;
- hyphenated line ends are joined (de-hyphenated), CJK lines are joined without a space;
- page numbers and running headers/footers (same text at the page edge on most pages) are
  dropped.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from dataclasses import dataclass

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers

_BULLET = re.compile(r"^([•◦▪▫■□●○‣⁃∙·\-–—*])\s+")
_ORDERED = re.compile(r"^(\d{1,3}|[a-zA-Z])[.)]\s+")
_SENTENCE_END = ("。", "！", "？", "：", ".", "!", "?", ":", ";", "；", "”", '"', ")")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?\d{1,5}(?:\s*(?:/|of)\s*\d{1,5})?$|^[-–]\s*\d{1,5}\s*[-–]$", re.IGNORECASE
)
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    size: float
    x0: float
    y0: float  # bottom (PDF user space: y grows upwards)
    x1: float
    y1: float  # top
    page: int
    bold: bool = False


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x3000 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x2FFFF
    )  # fmt: skip


def join_lines(first: str, second: str) -> str:
    """Join a wrapped line onto the text before it: de-hyphenate, no space between CJK."""
    if not first:
        return second
    if first.endswith("\u00ad"):
        return first[:-1] + second
    if first.endswith("-") and len(first) > 1 and first[-2].isalpha():
        # "inter-" + "national" was a word broken by hyphenation; "Anglo-" + "Saxon" is a
        # compound broken at its own hyphen.
        return (first[:-1] if second[:1].islower() else first) + second
    if _is_cjk(first[-1]) and _is_cjk(second[0]):
        return first + second
    return first + " " + second


def body_size(lines: list[Line]) -> float:
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def drop_page_furniture(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Remove page numbers and running headers/footers found at the page edges."""
    edge_texts: Counter[str] = Counter()
    for lines, height in zip(pages, heights, strict=True):
        seen = {_DIGITS.sub("#", ln.text) for ln in lines if _at_edge(ln, height)}
        edge_texts.update(seen)
    repeated = {text for text, n in edge_texts.items() if n >= 2 and n * 2 >= len(pages)}
    kept: list[list[Line]] = []
    for lines, height in zip(pages, heights, strict=True):
        kept.append(
            [
                ln
                for ln in lines
                if not (
                    _at_edge(ln, height)
                    and (_PAGE_NUMBER.match(ln.text) or _DIGITS.sub("#", ln.text) in repeated)
                )
            ]
        )
    return kept


def _at_edge(line: Line, height: float) -> bool:
    return line.y1 > height * 0.92 or line.y0 < height * 0.08


@dataclass
class _Block:
    kind: str  # heading | para | item
    text: str
    level: int = 0
    last: Line | None = None
    page: int = 0  # the page of the block's first line


def _heading_levels(lines: list[Line], body: float) -> dict[float, int]:
    sizes = sorted({ln.size for ln in lines if _is_heading_size(ln, body)}, reverse=True)
    return {size: min(index + 1, 6) for index, size in enumerate(sizes)}


def _is_heading_size(line: Line, body: float) -> bool:
    return line.size >= body * 1.15 and len(line.text) <= 150


def _typical_gap(lines: list[Line], body: float) -> float:
    gaps = [
        prev.y0 - cur.y1
        for prev, cur in itertools.pairwise(lines)
        if prev.page == cur.page and prev.size == cur.size == body and prev.y0 - cur.y1 > -body
    ]
    return statistics.median(gaps) if gaps else body * 0.3


def outline_key(text: str) -> str:
    """How a bookmark title and a line of text are compared: case and spacing ignored."""
    return " ".join(text.split()).casefold()


def lines_to_markdown(
    pages: list[list[Line]], page_width: float, outline: dict[str, int] | None = None
) -> str:
    """`outline` maps outline_key(bookmark title) -> heading level: a line that is exactly a
    bookmark title is a heading at the bookmark's depth, whatever its font says."""
    blocks = _blocks(pages, page_width, outline)
    return _render(blocks).replace("\u00ad", "-") if blocks else ""


def page_markdowns(
    pages: list[list[Line]], page_width: float, outline: dict[str, int] | None = None
) -> dict[int, str]:
    """Markdown per page (by `Line.page`), with the document-wide heading levels and body
    size; a paragraph running across a page break belongs to the page it starts on."""
    by_page: dict[int, list[_Block]] = {}
    for block in _blocks(pages, page_width, outline):
        by_page.setdefault(block.page, []).append(block)
    return {page: _render(blocks).replace("\u00ad", "-") for page, blocks in by_page.items()}


def _blocks(
    pages: list[list[Line]], page_width: float, outline: dict[str, int] | None
) -> list[_Block]:
    lines = [ln for page in pages for ln in page]
    if not lines:
        return []
    outline = outline or {}
    body = body_size(lines)
    levels = _heading_levels(lines, body)
    bold_level = min(len(levels) + 1, 6)
    gap = _typical_gap(lines, body)
    right_edge = max((ln.x1 for ln in lines if ln.size == body), default=page_width)
    blocks: list[_Block] = []
    current: _Block | None = None
    previous: Line | None = None

    for line in lines:
        space_above = (previous.y0 - line.y1) if previous and previous.page == line.page else None
        standalone = space_above is None or space_above > gap + body * 0.4
        level = levels.get(line.size) if _is_heading_size(line, body) else None
        if outline and len(line.text) <= 150:
            level = outline.get(outline_key(line.text), level)
        if (
            level is None
            and line.bold
            and abs(line.size - body) < 0.6
            and len(line.text) <= 80
            and standalone
            and not line.text.endswith(_SENTENCE_END[:8])
            and not (previous and previous.bold and previous.page == line.page and not standalone)
        ):
            level = bold_level
        if level is not None:
            if (
                current is not None
                and current.kind == "heading"
                and current.level == level
                and current.last is not None
                and current.last.page == line.page
                and space_above is not None
                and space_above < line.size
            ):
                current.text = join_lines(current.text, line.text)  # a wrapped heading
            else:
                current = _Block("heading", line.text, level, page=line.page)
                blocks.append(current)
            current.last = line
            previous = line
            continue

        bullet = _BULLET.match(line.text)
        ordered = _ORDERED.match(line.text)
        starts_item = bullet is not None or ordered is not None
        continues = (
            current is not None
            and current.kind in ("para", "item")
            and not starts_item
            and current.last is not None
            and _continues(current.last, line, space_above, gap, body, right_edge)
        )
        if continues and current is not None:
            current.text = join_lines(current.text, line.text)
            current.last = line
        else:
            if bullet:
                text = "- " + line.text[bullet.end() :]
            elif ordered:
                marker = ordered.group(1)
                text = (f"{marker}. " if marker.isdigit() else f"- {marker}) ") + line.text[
                    ordered.end() :
                ]
            else:
                text = line.text
            current = _Block("item" if starts_item else "para", text, last=line, page=line.page)
            blocks.append(current)
        previous = line
    return blocks


def _continues(
    last: Line, line: Line, space_above: float | None, gap: float, body: float, right_edge: float
) -> bool:
    if abs(line.size - last.size) > 0.6:
        return False
    if space_above is None:  # new page: continue only a sentence cut mid-way
        return not last.text.endswith(_SENTENCE_END) and line.text[:1].islower()
    if space_above > gap + body * 0.4:
        return False
    short = last.x1 < right_edge - body * 6
    return not (short and last.text.endswith(_SENTENCE_END))


def _render(blocks: list[_Block]) -> str:
    out: list[str] = []
    previous = ""
    for block in blocks:
        if block.kind == "heading":
            text = "#" * block.level + " " + block.text
        elif block.kind == "item":
            text = block.text
        else:
            text = escape_block_markers(block.text)
        if out:
            out.append("\n" if block.kind == previous == "item" else "\n\n")
        out.append(text)
        previous = block.kind
    return "".join(out) + "\n"
