"""docx -> Markdown with python-docx: headings from styles, lists, GFM tables, body order."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
from docx.document import Document as DocxDocument
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ragline.adapters.parser.builtin.gfm import pipe_table
from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import InvalidFileContent, ParsedDocument, ParseOptions

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list (bullet|number)(?:\s*(\d))?$", re.IGNORECASE)
_WS = re.compile(r"[ \t\r\f\v]+")
_BLIP = qn("a:blip")
_EMBED = qn("r:embed")
_IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/bmp": "bmp"}
MAX_IMAGES = 500


def _paragraph_images(paragraph: Paragraph, images: dict[str, bytes]) -> list[str]:
    """Link targets of the pictures embedded in this paragraph (blobs added to `images`)."""
    targets: list[str] = []
    related = paragraph.part.related_parts
    for blip in paragraph._p.iter(_BLIP):
        part = related.get(blip.get(_EMBED) or "")
        suffix = _IMAGE_TYPES.get(getattr(part, "content_type", ""))
        if part is None or suffix is None or len(images) >= MAX_IMAGES:
            continue
        target = f"images/docx-{len(images) + 1}.{suffix}"
        images[target] = part.blob
        targets.append(target)
    return targets


@dataclass
class _Numbering:
    """numId -> ilvl -> numFmt, read once from numbering.xml."""

    formats: dict[str, dict[int, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, document: DocxDocument) -> _Numbering:
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return cls()
        abstract: dict[str, dict[int, str]] = {}
        for node in root.iterchildren(qn("w:abstractNum")):
            levels: dict[int, str] = {}
            for lvl in node.iterchildren(qn("w:lvl")):
                fmt = lvl.find(qn("w:numFmt"))
                ilvl = lvl.get(qn("w:ilvl")) or "0"
                if ilvl.isdigit():
                    levels[int(ilvl)] = fmt.get(qn("w:val")) if fmt is not None else "decimal"
            abstract[node.get(qn("w:abstractNumId")) or ""] = levels
        numbering = cls()
        for num in root.iterchildren(qn("w:num")):
            ref = num.find(qn("w:abstractNumId"))
            if ref is not None:
                numbering.formats[num.get(qn("w:numId")) or ""] = abstract.get(
                    ref.get(qn("w:val")) or "", {}
                )
        return numbering


@dataclass(frozen=True, slots=True)
class _Style:
    name: str
    element: Any
    based_on: str | None


class _Styles:
    """Paragraph styles read once from styles.xml: python-docx resolves a paragraph's style by
    scanning every style, which made style lookups most of the parse time."""

    def __init__(self, document: DocxDocument) -> None:
        self.by_id: dict[str, _Style] = {}
        self.default_id: str | None = None
        self._chains: dict[str | None, list[_Style]] = {}
        for element in document.styles.element.iterchildren(qn("w:style")):
            if element.get(qn("w:type")) != "paragraph":
                continue
            style_id = element.get(qn("w:styleId")) or ""
            name = element.find(qn("w:name"))
            based = element.find(qn("w:basedOn"))
            self.by_id[style_id] = _Style(
                name.get(qn("w:val")) or "" if name is not None else "",
                element,
                based.get(qn("w:val")) if based is not None else None,
            )
            if element.get(qn("w:default")) in ("1", "true", "on"):
                self.default_id = style_id

    def chain(self, paragraph: Paragraph) -> list[_Style]:
        """The paragraph's style and its basedOn ancestors (cycles and depth bounded)."""
        style_id = paragraph._p.style or self.default_id
        cached = self._chains.get(style_id)
        if cached is not None:
            return cached
        chain: list[_Style] = []
        current = style_id
        while current is not None and current in self.by_id and len(chain) < 20:
            chain.append(self.by_id[current])
            current = self.by_id[current].based_on
        self._chains[style_id] = chain
        return chain


def _heading_level(paragraph: Paragraph, styles: _Styles) -> int | None:
    """Heading N / Title by name, else an outline level on the paragraph or its styles."""
    chain = styles.chain(paragraph)
    for style in chain:
        if style.name.lower() == "title":
            return 0
        match = _HEADING_STYLE.match(style.name)
        if match:
            return int(match.group(1))
    for element in [paragraph._p, *(s.element for s in chain)]:
        ppr = element.find(qn("w:pPr"))
        outline = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
        value = outline.get(qn("w:val")) if outline is not None else None
        if value is not None and value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


def _list_info(
    paragraph: Paragraph, styles: _Styles, numbering: _Numbering
) -> tuple[bool, int, str] | None:
    """(ordered, level, list key) when the paragraph is a list item."""
    chain = styles.chain(paragraph)
    style_match = _LIST_STYLE.match(chain[0].name if chain else "")
    style_level = int(style_match.group(2)) - 1 if style_match and style_match.group(2) else 0
    for element in [paragraph._p, *(s.element for s in chain)]:
        ppr = element.find(qn("w:pPr"))
        numpr = ppr.find(qn("w:numPr")) if ppr is not None else None
        if numpr is None:
            continue
        num_id_el = numpr.find(qn("w:numId"))
        ilvl_el = numpr.find(qn("w:ilvl"))
        num_id = num_id_el.get(qn("w:val")) if num_id_el is not None else None
        ilvl_raw = ilvl_el.get(qn("w:val")) if ilvl_el is not None else None
        if not num_id or num_id == "0":
            return None  # numbering explicitly removed
        # 'List Bullet 2' is level 1 even when its numbering omits ilvl.
        level = int(ilvl_raw) if ilvl_raw and ilvl_raw.isdigit() else style_level
        fmt = numbering.formats.get(num_id, {}).get(level, "bullet")
        return fmt not in ("bullet", "none"), min(level, 8), num_id
    if style_match:
        return (
            style_match.group(1).lower() == "number",
            style_level,
            f"style:{style_match.group(1)}",
        )
    return None


def _paragraph_text(paragraph: Paragraph) -> str:
    lines = [_WS.sub(" ", line).strip() for line in paragraph.text.split("\n")]
    return "\n".join(line for line in lines if line)


def _table_rows(table: Table) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # A horizontally merged cell is returned once per grid column: keep its text once.
            cells.append("" if cell._tc is previous else " ".join(cell.text.split()))
            previous = cell._tc
        rows.append(cells)
    return rows


class _Renderer:
    def __init__(self, styles: _Styles, numbering: _Numbering, has_title: bool) -> None:
        self.styles = styles
        self.numbering = numbering
        self.shift = 1 if has_title else 0
        self.blocks: list[tuple[str, str]] = []
        self.counters: dict[tuple[str, int], int] = {}
        self.first_heading: str | None = None
        self.list_kind = "item"
        self.images: dict[str, bytes] | None = None  # set: collect and link pictures

    def paragraph(self, paragraph: Paragraph) -> None:
        self._text(paragraph)
        if self.images is not None:
            for target in _paragraph_images(paragraph, self.images):
                self.blocks.append(("image", f"![]({target})"))

    def _text(self, paragraph: Paragraph) -> None:
        text = _paragraph_text(paragraph)
        if not text:
            return
        level = _heading_level(paragraph, self.styles)
        if level is not None:
            heading = " ".join(text.split("\n"))
            self.first_heading = self.first_heading or heading
            self.blocks.append(
                ("heading", "#" * min(6, max(1, level + self.shift)) + " " + heading)
            )
            return
        info = _list_info(paragraph, self.styles, self.numbering)
        if info is None:
            self.counters.clear()
            self.blocks.append(("para", escape_block_markers(text)))
            return
        ordered, level, key = info
        if level == 0 and not (self.blocks and self.blocks[-1][0] == f"item{ordered}"):
            self.list_kind = f"item{ordered}"
        for other in [k for k in self.counters if k[0] == key and k[1] > level]:
            del self.counters[other]
        count = self.counters.get((key, level), 0) + 1
        self.counters[(key, level)] = count
        marker = f"{count}." if ordered else "-"
        pad = "   " * level
        lines = text.split("\n")
        body = [pad + marker + " " + lines[0], *(pad + "   " + line for line in lines[1:])]
        self.blocks.append((self.list_kind, "\n".join(body)))

    def table(self, table: Table) -> None:
        self.counters.clear()
        rendered = pipe_table(_table_rows(table))
        if rendered:
            self.blocks.append(("table", rendered))

    def markdown(self) -> str:
        out: list[str] = []
        previous = ""
        for kind, text in self.blocks:
            if out:
                out.append("\n" if kind == previous and kind.startswith("item") else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out) + ("\n" if out else "")


def parse_docx(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    budget = ZipBudget(
        max_total_uncompressed=min(512 * 1024**2, options.limits.max_memory_bytes // 4)
    )
    check_zip(source, budget, "docx")
    try:
        document = docx.Document(str(source))
    except (zipfile.BadZipFile, KeyError, ValueError, SyntaxError) as exc:  # lxml's too
        raise InvalidFileContent(f"not a valid docx ({type(exc).__name__}: {exc})"[:300]) from None
    body = list(document.iter_inner_content())
    styles = _Styles(document)
    has_title = any(
        isinstance(b, Paragraph) and _heading_level(b, styles) == 0 and b.text.strip() for b in body
    )
    renderer = _Renderer(styles, _Numbering.of(document), has_title)
    if options.extract_images:
        renderer.images = {}
    for block in body:
        if isinstance(block, Paragraph):
            renderer.paragraph(block)
        else:
            renderer.table(block)
    markdown = renderer.markdown()
    title = (document.core_properties.title or "").strip() or renderer.first_heading
    warnings = [] if markdown.strip() else ["empty document"]
    images = renderer.images or {}
    if images:
        warnings.append(f"images: {len(images)}")
    return ParsedDocument(
        markdown=markdown, title=title, warnings=warnings, backend="python-docx", images=images
    )
