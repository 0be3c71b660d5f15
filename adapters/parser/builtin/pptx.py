"""pptx -> Markdown with python-pptx: one `#` section per slide, titled by the slide title.

Shapes are read in reading order (top to bottom, then left to right; groups expanded in
place). Body placeholders become bullet lists (their paragraph level is the nesting), other
text frames paragraphs, tables GFM tables, pictures a one-line note with their alt text
(what happens to the pixels is the image policy's business). Speaker notes are a
`## Speaker notes` sub-section of their slide.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError

from ragline.adapters.parser.builtin.gfm import pipe_table
from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.output_budget import OutputBudget
from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed, ParseOptions

MAX_SHAPES = 20_000
"""Shapes over the whole deck (groups included): a deck of real slides stays far below."""
NOTES_TITLE = "Speaker notes"
_TITLES = frozenset({PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE})
_BULLETED = frozenset({PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT})


def parse_pptx(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    limits = options.limits
    check_zip(source, ZipBudget(min(512 * 1024**2, limits.max_memory_bytes // 4)), file_type)
    try:
        deck = pptx.Presentation(str(source))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ParseEngineFailed(f"not a valid {file_type} presentation ({exc})"[:300]) from None
    budget = OutputBudget(limits.max_output_chars)
    counter = _ShapeCounter()
    out: list[str] = []
    first_title: str | None = None
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = _title_shape(slide)
        title = _one_line(title_shape.text_frame.text) if title_shape is not None else ""
        title = title or f"Slide {number}"
        first_title = first_title or (title if title_shape is not None else None)
        blocks = [f"# {title}"]
        for shape in _reading_order(slide.shapes, counter):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            blocks.extend(_shape_blocks(shape))
        notes = _notes(slide)
        if notes:
            blocks.append(f"## {NOTES_TITLE}")
            blocks.append(notes)
        text = "\n\n".join(blocks) + "\n\n"
        budget.spend(len(text), file_type)
        out.append(text)
    core_title = (deck.core_properties.title or "").strip()
    markdown = "".join(out).rstrip("\n") + "\n" if out else ""
    warnings = [] if out else ["empty document"]
    return ParsedDocument(markdown=markdown, title=core_title or first_title, warnings=warnings)


class _ShapeCounter:
    def __init__(self) -> None:
        self.count = 0

    def add(self, n: int) -> None:
        self.count += n
        if self.count > MAX_SHAPES:
            raise ParseEngineFailed(f"presentation has more than {MAX_SHAPES} shapes")


def _title_shape(slide: Any) -> Any:
    for shape in slide.placeholders:
        if shape.placeholder_format.type in _TITLES and shape.has_text_frame:
            return shape
    return None


def _position(shape: Any) -> tuple[int, int]:
    top, left = shape.top, shape.left
    return (top if top is not None else 1 << 62, left if left is not None else 1 << 62)


def _reading_order(shapes: Iterable[Any], counter: _ShapeCounter) -> Iterator[Any]:
    """Top to bottom, left to right; a group's members in their own reading order, in place.
    Iterative, so nested groups cannot exhaust the stack."""
    level = sorted(shapes, key=_position)
    counter.add(len(level))
    stack: list[Iterator[Any]] = [iter(level)]
    while stack:
        shape = next(stack[-1], None)
        if shape is None:
            stack.pop()
            continue
        if _shape_type(shape) == MSO_SHAPE_TYPE.GROUP:
            members = sorted(shape.shapes, key=_position)
            counter.add(len(members))
            stack.append(iter(members))
            continue
        yield shape


def _shape_type(shape: Any) -> MSO_SHAPE_TYPE | None:
    """python-pptx raises for shape kinds it does not know (an unusual autoshape, a
    graphic frame of a new kind): such a shape is read for its text only."""
    try:
        kind: MSO_SHAPE_TYPE | None = shape.shape_type
    except NotImplementedError:
        return None
    return kind


def _shape_blocks(shape: Any) -> list[str]:
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        table = pipe_table(rows)
        return [table] if table else []
    if _shape_type(shape) == MSO_SHAPE_TYPE.PICTURE:
        return [_picture_note(shape)]
    if not shape.has_text_frame:
        return []
    bulleted = shape.is_placeholder and shape.placeholder_format.type in _BULLETED
    lines: list[str] = []
    paragraphs: list[str] = []
    for paragraph in shape.text_frame.paragraphs:
        text = _one_line(paragraph.text)
        if not text:
            continue
        if bulleted or paragraph.level > 0:
            lines.append("  " * min(paragraph.level, 8) + "- " + escape_block_markers(text))
        else:
            paragraphs.append(escape_block_markers(text))
    blocks = []
    if lines:
        blocks.append("\n".join(lines))
    blocks.extend(paragraphs)
    return blocks


def _picture_note(shape: Any) -> str:
    described = shape._element.xpath("./p:nvPicPr/p:cNvPr/@descr")
    alt = _one_line(str(described[0])) if described else ""
    return f"[Image: {escape_block_markers(alt)}]" if alt else "[Image]"


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    if frame is None:
        return ""
    paragraphs = [_one_line(p.text) for p in frame.paragraphs]
    return "\n\n".join(escape_block_markers(p) for p in paragraphs if p)


def _one_line(text: str) -> str:
    return " ".join(text.split())
