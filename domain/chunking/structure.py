"""The structure tree of a Markdown document: sections (with level and title) and body blocks.

Every node carries character offsets into the Markdown it was built from, so chunks cut along
the tree can be traced back to the exact text. Building the tree from a format is an adapter's
job (Markdown today; DOCX/PDF/HTML parsers may build it from their own signals); this module
only assembles headings and blocks, already located, into the tree.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import NamedTuple


class NodeType(StrEnum):
    DOCUMENT = "DOCUMENT"
    SECTION = "SECTION"
    PARAGRAPH = "PARAGRAPH"
    LIST = "LIST"
    TABLE = "TABLE"
    CODE = "CODE"
    QUOTE = "QUOTE"


BLOCK_TYPES = frozenset(
    {NodeType.PARAGRAPH, NodeType.LIST, NodeType.TABLE, NodeType.CODE, NodeType.QUOTE}
)


class StructureNode(NamedTuple):
    """One node. Sections span from their heading to the next heading of the same or a higher
    level; `body_start` is where the text after the heading line begins. A NamedTuple because
    trees of large documents have thousands of nodes and construction cost shows."""

    id: str
    parent_id: str | None
    node_type: NodeType
    level: int
    title: str
    section_path: tuple[str, ...]
    canonical_path: str
    start: int
    end: int
    body_start: int


class Heading(NamedTuple):
    """A heading located by a builder: `start` of its line, `line_end` just past the line."""

    start: int
    line_end: int
    level: int
    title: str


class Block(NamedTuple):
    """A body block located by a builder (paragraph, list, table, code, quote)."""

    start: int
    end: int
    node_type: NodeType


ROOT_ID = "root"


class StructureTree:
    """Nodes in document order (root first), with lookup by id and children by parent id."""

    __slots__ = ("_by_id", "_children", "has_blocks", "length", "nodes", "section_starts")

    def __init__(self, length: int, nodes: Sequence[StructureNode], *, has_blocks: bool) -> None:
        self.length = length
        self.nodes = tuple(nodes)
        self.has_blocks = has_blocks
        self._by_id = {n.id: n for n in self.nodes}
        children: dict[str, list[StructureNode]] = {}
        for n in self.nodes:
            if n.parent_id is not None:
                children.setdefault(n.parent_id, []).append(n)
        self._children = children
        self.section_starts = [n.start for n in self.nodes if n.node_type is NodeType.SECTION]

    @property
    def root(self) -> StructureNode:
        return self.nodes[0]

    def node(self, node_id: str) -> StructureNode:
        return self._by_id[node_id]

    def children(self, node_id: str) -> list[StructureNode]:
        return self._children.get(node_id, [])

    def sections(self) -> list[StructureNode]:
        return [n for n in self.nodes if n.node_type is NodeType.SECTION]


class _OpenSection:
    """A section whose end is not known yet (mutable while headings are nested)."""

    __slots__ = ("canonical_path", "children", "end", "heading", "id", "parent_id", "path")

    def __init__(
        self, sid: str, parent_id: str, heading: Heading, path: tuple[str, ...], canon: str
    ) -> None:
        self.id = sid
        self.parent_id = parent_id
        self.heading = heading
        self.path = path
        self.canonical_path = canon
        self.end = -1
        self.children = 0

    def freeze(self, length: int) -> StructureNode:
        start, line_end, level, title = self.heading
        end = length if self.end < 0 else self.end
        fields = (self.id, self.parent_id, NodeType.SECTION, level, title, self.path)
        # tuple.__new__: a NamedTuple's own constructor costs several times more, per section
        return tuple.__new__(StructureNode, (*fields, self.canonical_path, start, end, line_end))


def build_tree(
    length: int, headings: Iterable[Heading], blocks: Iterable[Block] | None = None
) -> StructureTree:
    """Nest `headings` (document order) into sections under a root spanning [0, length).

    A section ends where the next heading of the same or a higher level starts. Each block is
    attached to the innermost section containing its start (the last heading before it).
    """
    root = StructureNode(ROOT_ID, None, NodeType.DOCUMENT, 0, "", (), "/", 0, length, 0)
    opened: list[_OpenSection] = []
    stack: list[_OpenSection] = []
    root_children = 0
    for h in headings:
        while stack and stack[-1].heading.level >= h.level:
            stack.pop().end = h.start
        if stack:
            parent = stack[-1]
            parent.children += 1
            sec = _OpenSection(
                f"s{len(opened) + 1}",
                parent.id,
                h,
                (*parent.path, h.title),
                f"{parent.canonical_path}/s{parent.children}",
            )
        else:
            root_children += 1
            sec = _OpenSection(f"s{len(opened) + 1}", ROOT_ID, h, (h.title,), f"/s{root_children}")
        stack.append(sec)
        opened.append(sec)
    sections = [s.freeze(length) for s in opened]
    if blocks is None:
        return StructureTree(length, [root, *sections], has_blocks=False)
    starts = [s.start for s in sections]
    block_count: dict[str, int] = {}
    block_nodes: list[StructureNode] = []
    for i, b in enumerate(blocks):
        k = bisect_right(starts, b.start)
        owner = sections[k - 1] if k else root
        ordinal = block_count[owner.id] = block_count.get(owner.id, 0) + 1
        block_nodes.append(
            StructureNode(
                f"b{i + 1}",
                owner.id,
                b.node_type,
                owner.level,
                "",
                owner.section_path,
                f"{owner.canonical_path.rstrip('/')}/b{ordinal}",
                b.start,
                b.end,
                b.start,
            )
        )
    merged = sorted(
        [*sections, *block_nodes], key=lambda n: (n.start, n.node_type is not NodeType.SECTION)
    )
    return StructureTree(length, [root, *merged], has_blocks=True)
