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

    __slots__ = (
        "_by_id",
        "_children",
        "_sections",
        "has_blocks",
        "length",
        "nodes",
        "section_starts",
    )

    def __init__(self, length: int, nodes: Sequence[StructureNode], *, has_blocks: bool) -> None:
        self.length = length
        self.nodes = tuple(nodes)
        self.has_blocks = has_blocks
        # the lookups are built on first use: the character presets never ask for them
        self._by_id: dict[str, StructureNode] | None = None
        self._children: dict[str, list[StructureNode]] | None = None
        section = NodeType.SECTION
        self._sections = [n for n in self.nodes if n.node_type is section]
        self.section_starts = [n.start for n in self._sections]

    @property
    def root(self) -> StructureNode:
        return self.nodes[0]

    def node(self, node_id: str) -> StructureNode:
        if self._by_id is None:
            self._by_id = {n.id: n for n in self.nodes}
        return self._by_id[node_id]

    def children(self, node_id: str) -> list[StructureNode]:
        if self._children is None:
            children: dict[str, list[StructureNode]] = {}
            for n in self.nodes:
                if n.parent_id is not None:
                    children.setdefault(n.parent_id, []).append(n)
            self._children = children
        return self._children.get(node_id, [])

    def sections(self) -> list[StructureNode]:
        return list(self._sections)


def build_tree(
    length: int,
    headings: Iterable[tuple[int, int, int, str]],
    blocks: Iterable[Block] | None = None,
) -> StructureTree:
    """Nest `headings` (document order) into sections under a root spanning [0, length).

    A heading is a Heading or a plain tuple of its fields (start, line_end, level, title). A
    section ends where the next heading of the same or a higher level starts. Each block is
    attached to the innermost section containing its start (the last heading before it).
    """
    root = StructureNode(ROOT_ID, None, NodeType.DOCUMENT, 0, "", (), "/", 0, length, 0)
    # One pass nests the headings with a stack of indexes and fills per-section lists (no
    # object per open section); the nodes are built once every end is known.
    heads = list(headings)
    ids = [f"s{i + 1}" for i in range(len(heads))]
    ends = [length] * len(heads)
    parent_ids: list[str] = []
    paths: list[tuple[str, ...]] = []
    canonical: list[str] = []
    kids = [0] * len(heads)  # children so far, per section
    root_kids = 0
    stack: list[int] = []  # the sections still open, outermost first
    for i, (start, _, level, title) in enumerate(heads):
        while stack and heads[stack[-1]][2] >= level:
            ends[stack.pop()] = start
        if stack:
            p = stack[-1]
            kids[p] += 1
            parent_ids.append(ids[p])
            paths.append((*paths[p], title))
            canonical.append(f"{canonical[p]}/s{kids[p]}")
        else:
            root_kids += 1
            parent_ids.append(ROOT_ID)
            paths.append((title,))
            canonical.append(f"/s{root_kids}")
        stack.append(i)
    section, new = NodeType.SECTION, tuple.__new__
    # tuple.__new__: a NamedTuple's own constructor costs several times more, per section
    sections: list[StructureNode] = [
        new(StructureNode, (sid, pid, section, h[2], h[3], path, canon, h[0], end, h[1]))
        for sid, pid, h, path, canon, end in zip(
            ids, parent_ids, heads, paths, canonical, ends, strict=True
        )
    ]
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
