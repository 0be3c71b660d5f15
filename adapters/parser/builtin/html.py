"""html/htm -> Markdown with selectolax (lexbor): headings, lists, GFM tables, code fences.

The tree walk is iterative (no recursion limit on deep nesting), and nesting depth is checked
on the raw bytes first because lexbor's tree building turns quadratic on absurd depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ragline.adapters.parser.builtin.gfm import pipe_table
from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.text_decoding import decode_text, read_bounded, reject_binary
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed, ParseOptions

MAX_NESTING = 3000

_SKIP = frozenset(
    {"script", "style", "noscript", "template", "nav", "aside", "svg", "canvas", "iframe",
     "object", "embed", "button", "select", "textarea", "input", "head", "title", "meta",
     "link", "footer", "dialog", "math", "video", "audio", "map"}
)  # fmt: skip
_BLOCK = frozenset(
    {"p", "div", "section", "article", "main", "header", "h1", "h2", "h3", "h4", "h5", "h6",
     "ul", "ol", "li", "table", "pre", "blockquote", "hr", "dl", "dt", "dd", "figure",
     "figcaption", "address", "details", "summary", "fieldset", "legend", "caption", "form",
     "center", "body", "html"}
)  # fmt: skip
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr", "param", "keygen", "command"}
)  # fmt: skip
# Elements whose end tag may be omitted: they do not deepen the tree in practice.
_OPTIONAL_END = frozenset(
    {"p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot",
     "colgroup", "caption", "rp", "rt", "html", "head", "body"}
)  # fmt: skip
_TAG = re.compile(rb"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
_WS = re.compile(r"[ \t\r\n\f\v]+")
_LANG = re.compile(r"(?:language|lang)-([\w+#.-]+)")
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def nesting_depth(data: bytes, stop_at: int) -> int:
    """Estimated element depth from the raw tags (void/optional-end tags ignored); early stop."""
    depth = deepest = 0
    for match in _TAG.finditer(data):
        name = match.group(2).lower().decode("ascii")
        if name in _VOID or name in _OPTIONAL_END or match.group(3):
            continue
        if match.group(1):
            depth = max(0, depth - 1)
        else:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
    return deepest


@dataclass
class _Table:
    rows: list[list[str]] = field(default_factory=list)
    cell: list[str] | None = None
    caption: list[str] = field(default_factory=list)


@dataclass
class _ListLevel:
    ordered: bool
    counter: int = 0
    marker_pending: bool = False
    indent: int = 0  # content column of this level's items


class _MarkdownWriter:
    """Receives enter/leave/text events from the tree walk and accumulates Markdown blocks."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, str]] = []  # (kind, text)
        self.inline: list[str] = []
        self.heading = 0
        self.lists: list[_ListLevel] = []
        self.tables: list[_Table] = []
        self.quote = 0
        self.in_caption = False
        self.first_heading: str | None = None
        self.list_id = 0  # items of one top-level list are joined tightly

    # -- inline ---------------------------------------------------------------------------
    def text(self, value: str) -> None:
        target = self._cell_target()
        target.append(_WS.sub(" ", value))

    def _cell_target(self) -> list[str]:
        if self.tables:
            table = self.tables[-1]
            if self.in_caption:
                return table.caption
            if table.cell is not None:
                return table.cell
            return []  # stray text between cells: dropped, as browsers mostly do
        return self.inline

    def line_break(self) -> None:
        if self.tables:
            self._cell_target().append(" ")
        else:
            self.inline.append("\n")

    def code_span(self, value: str) -> None:
        value = _WS.sub(" ", value).strip()
        if value:
            fence = "``" if "`" in value else "`"
            self._cell_target().append(f"{fence}{value}{fence}")

    # -- blocks ---------------------------------------------------------------------------
    def flush(self) -> None:
        if self.tables:
            self._cell_target().append(" ")
            return
        raw = "".join(self.inline)
        self.inline = []
        lines = [_WS.sub(" ", part).strip() for part in raw.split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            return
        if self.heading:
            text = " ".join(lines)
            if self.first_heading is None:
                self.first_heading = text
            self._emit("heading", "#" * self.heading + " " + text)
            return
        # Text is text: a line that starts with "#", ">", "-", "1." ... must not become a
        # heading or list that the HTML did not have (section paths follow h1-h6 only).
        lines = [escape_block_markers(line) for line in lines]
        if self.lists:
            level = self.lists[-1]
            pad = " " * level.indent
            if level.marker_pending:
                level.marker_pending = False
                marker = f"{level.counter}." if level.ordered else "-"
                first = " " * (level.indent - len(marker) - 1) + marker + " " + lines[0]
                body = [first] + [pad + line for line in lines[1:]]
                self._emit(f"item{self.list_id}", "\n".join(body))
            else:
                self._emit(f"item{self.list_id}", "\n".join(pad + line for line in lines))
            return
        self._emit("para", "\n".join(lines))

    def _emit(self, kind: str, text: str) -> None:
        if self.quote:
            prefix = "> " * self.quote
            text = "\n".join(prefix + line for line in text.split("\n"))
        self.blocks.append((kind, text))

    def start_list(self, ordered: bool, start: int) -> None:
        self.flush()
        if not self.lists:
            self.list_id += 1
        parent = self.lists[-1].indent if self.lists else 0
        width = 3 if ordered else 2
        self.lists.append(_ListLevel(ordered, counter=start - 1, indent=parent + width))

    def end_list(self) -> None:
        self.flush()
        if self.lists:
            self.lists.pop()

    def start_item(self) -> None:
        self.flush()
        if self.lists:
            level = self.lists[-1]
            level.counter += 1
            level.marker_pending = True
            if level.ordered:
                level.indent = max(level.indent, len(f"{level.counter}.") + 1)

    def code_block(self, value: str, language: str) -> None:
        self.flush()
        value = value.strip("\n")
        if not value.strip():
            return
        if self.tables:
            self._cell_target().append(" " + _WS.sub(" ", value) + " ")
            return
        fence = "```"
        while fence in value:
            fence += "`"
        pad = " " * self.lists[-1].indent if self.lists else ""
        body = "\n".join(pad + line for line in [fence + language, *value.split("\n"), fence])
        self._emit("code", body)

    def rule(self) -> None:
        self.flush()
        if not self.tables:
            self._emit("rule", "---")

    def start_table(self) -> None:
        self.flush()
        if self.tables:  # nested table: its text flows into the outer cell
            self.tables.append(self.tables[-1])
        else:
            self.tables.append(_Table())

    def end_table(self) -> None:
        table = self.tables.pop()
        if self.tables:
            return
        caption = _WS.sub(" ", "".join(table.caption)).strip()
        rendered = pipe_table(table.rows)
        if caption:
            self._emit("para", caption)
        if rendered:
            self._emit("table", rendered)

    def start_row(self) -> None:
        if len(self.tables) == 1:
            self.tables[-1].rows.append([])

    def start_cell(self) -> None:
        table = self.tables[-1] if self.tables else None
        if table is None or len(self.tables) > 1:
            return
        if not table.rows:
            table.rows.append([])
        table.cell = []

    def end_cell(self, colspan: int) -> None:
        table = self.tables[-1] if self.tables else None
        if table is None or len(self.tables) > 1 or table.cell is None:
            return
        table.rows[-1].append("".join(table.cell))
        table.rows[-1].extend([""] * (colspan - 1))
        table.cell = None

    def markdown(self) -> str:
        self.flush()
        out: list[str] = []
        previous = ""
        for kind, text in self.blocks:
            if out:
                out.append("\n" if kind == previous and kind.startswith("item") else "\n\n")
            out.append(text)
            previous = kind
        return "".join(out) + ("\n" if out else "")


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    for selector in ("main", "article"):
        found = tree.css(selector)
        if len(found) == 1:
            return found[0]
    return tree.body


def _hidden(node: LexborNode) -> bool:
    attrs = node.attributes
    return (
        "hidden" in attrs
        or attrs.get("aria-hidden") == "true"
        or attrs.get("role") in ("navigation", "banner", "contentinfo")
    )


def _int_attr(node: LexborNode, name: str, default: int) -> int:
    value = node.attributes.get(name) or ""
    return int(value) if value.isdigit() and 0 < int(value) < 1000 else default


def _code_language(node: LexborNode) -> str:
    classes = " ".join(
        filter(
            None,
            [node.attributes.get("class"), *(c.attributes.get("class") for c in node.css("code"))],
        )
    )
    match = _LANG.search(classes)
    return match.group(1) if match else ""


def _enter(writer: _MarkdownWriter, node: LexborNode, tag: str) -> bool:
    """Handle an opening tag; False means: do not descend into the children."""
    if tag in _HEADINGS:
        writer.flush()
        writer.heading = _HEADINGS[tag] if not writer.tables else 0
    elif tag in ("ul", "ol", "menu"):
        writer.start_list(tag == "ol", _int_attr(node, "start", 1))
    elif tag == "li":
        writer.start_item()
    elif tag == "pre":
        writer.code_block(node.text(deep=True), _code_language(node))
        return False
    elif tag == "code":
        writer.code_span(node.text(deep=True))
        return False
    elif tag == "blockquote":
        writer.flush()
        writer.quote += 1
    elif tag == "table":
        writer.start_table()
    elif tag == "tr":
        writer.start_row()
    elif tag in ("td", "th"):
        writer.start_cell()
    elif tag == "caption":
        writer.in_caption = True
    elif tag == "br":
        writer.line_break()
    elif tag == "hr":
        writer.rule()
    elif tag == "img":
        alt = (node.attributes.get("alt") or "").strip()
        if alt:
            writer.text(f" {alt} ")
    elif tag in _BLOCK:
        writer.flush()
    return True


def _leave(writer: _MarkdownWriter, node: LexborNode, tag: str) -> None:
    if tag in _HEADINGS:
        writer.flush()
        writer.heading = 0
    elif tag in ("ul", "ol", "menu"):
        writer.end_list()
    elif tag == "blockquote":
        writer.flush()
        writer.quote = max(0, writer.quote - 1)
    elif tag == "table":
        writer.end_table()
    elif tag in ("td", "th"):
        writer.end_cell(_int_attr(node, "colspan", 1))
    elif tag == "caption":
        writer.in_caption = False
    elif tag in _BLOCK:
        writer.flush()


def html_to_markdown(tree: LexborHTMLParser) -> tuple[str, str | None]:
    """Walk the tree iteratively and return (markdown, first heading)."""
    writer = _MarkdownWriter()
    root = _content_root(tree)
    if root is None:
        return "", None
    stack: list[tuple[LexborNode, bool]] = [(root, True)]
    while stack:
        node, entering = stack.pop()
        tag = node.tag or ""
        if not entering:
            _leave(writer, node, tag)
            continue
        if tag == "-text":
            writer.text(node.text_content or "")
            continue
        if tag.startswith("-") or tag in _SKIP or _hidden(node):
            continue
        if not _enter(writer, node, tag):
            continue
        stack.append((node, False))
        children: list[LexborNode] = []
        child = node.child
        while child is not None:
            children.append(child)
            child = child.next
        stack.extend((c, True) for c in reversed(children))
    return writer.markdown(), writer.first_heading


def _decode_html(data: bytes, file_type: str) -> tuple[str, str]:
    """A declared <meta charset> wins when it is not UTF-8 and decodes cleanly."""
    declared = _META_CHARSET.search(data[:4096])
    if declared:
        name = declared.group(1).decode("ascii").lower()
        if name not in ("utf-8", "utf8"):
            try:
                return data.decode(name), name
            except (LookupError, UnicodeDecodeError):
                pass
    return decode_text(data, file_type)


def parse_html(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    read_bounded(source.stat().st_size, options.limits.max_output_chars, file_type)
    data = source.read_bytes()
    reject_binary(data, file_type)
    depth = nesting_depth(data, MAX_NESTING)
    if depth > MAX_NESTING:
        raise ParseEngineFailed(f"HTML nesting deeper than {MAX_NESTING} elements")
    text, codec = _decode_html(data, file_type)
    del data
    tree = LexborHTMLParser(text)
    title_node = tree.css_first("title")
    markdown, first_heading = html_to_markdown(tree)
    title = (title_node.text(deep=True).strip() if title_node else "") or first_heading
    warnings = [] if codec == "utf-8" else [f"decoded as {codec}"]
    if not markdown.strip():
        warnings.append("empty document")
    return ParsedDocument(markdown=markdown, title=title or None, warnings=warnings)
