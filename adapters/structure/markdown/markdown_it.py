"""Markdown structure from markdown-it-py's CommonMark block tokens (top level only).

Token line maps are turned into character offsets through a table of line starts. Handles
what the line scanner does not (setext headings, containers), at several times the cost.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from ragline.domain.chunking import Block, Heading, NodeType, StructureTree, build_tree

_BLOCK_TYPES = {
    "paragraph_open": NodeType.PARAGRAPH,
    "bullet_list_open": NodeType.LIST,
    "ordered_list_open": NodeType.LIST,
    "table_open": NodeType.TABLE,
    "blockquote_open": NodeType.QUOTE,
    "fence": NodeType.CODE,
    "code_block": NodeType.CODE,
    "html_block": NodeType.PARAGRAPH,
}


class MarkdownItStructureBuilder:
    """StructureBuilder over markdown-it-py (CommonMark + tables)."""

    def __init__(self) -> None:
        self._md = MarkdownIt("commonmark").enable("table")

    def build(self, markdown: str, *, blocks: bool = True) -> StructureTree:
        tokens = self._md.parse(markdown)
        line_starts = [0]
        pos = markdown.find("\n")
        while pos >= 0:
            line_starts.append(pos + 1)
            pos = markdown.find("\n", pos + 1)
        n = len(markdown)

        def offset(line: int) -> int:
            return line_starts[line] if line < len(line_starts) else n

        headings: list[Heading] = []
        found: list[Block] = []
        for i, tok in enumerate(tokens):
            if tok.level != 0 or tok.map is None:
                continue
            start, end = offset(tok.map[0]), offset(tok.map[1])
            if tok.type == "heading_open":
                title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
                headings.append(Heading(start, end, int(tok.tag[1]), title))
            elif blocks and tok.type in _BLOCK_TYPES:
                found.append(Block(start, end, _BLOCK_TYPES[tok.type]))
        return build_tree(n, headings, found if blocks else None)
