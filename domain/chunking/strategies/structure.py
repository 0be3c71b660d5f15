"""STRUCTURE: the section tree as natural boundaries.

Parent seeds are the content-bearing sections: each section's own region (its heading up to
its first subsection) when it holds body text. A bare heading shell is not a seed; its heading
line joins the next seed (or the last one, at the end), so no character of the document is
lost. Text before the first heading is a seed anchored at the document root.

Structure children of a parent anchored to a section are the section's body blocks inside the
parent's span, cut at block starts (the first one also takes the heading).
"""

from __future__ import annotations

import re

from ragline.domain.chunking.candidate import Anchor, SourceType
from ragline.domain.chunking.cleanup import Piece
from ragline.domain.chunking.structure import BLOCK_TYPES, NodeType, StructureTree

# (start, end, source, anchor): a parent seed before it gets its own cut index
Seed = tuple[int, int, SourceType, Anchor]
_NON_SPACE = re.compile(r"\S")
_STRUCTURE = SourceType.STRUCTURE


def _anchor_of(node_id: str, tree: StructureTree) -> Anchor:
    n = tree.node(node_id)
    return Anchor(n.section_path, n.id, n.node_type, n.canonical_path)


def structure_parent_seeds(text: str, tree: StructureTree) -> list[Seed]:
    """Seeds covering every non-space character of `text`, or [] when no section has a body."""
    sections = tree.sections()
    length = len(text)
    search = _NON_SPACE.search
    new = tuple.__new__  # an Anchor per seed: its NamedTuple constructor costs several times more
    seeds: list[Seed] = []
    starts = tree.section_starts
    first = starts[0] if starts else length
    if search(text, 0, first):
        root = tree.root
        seeds.append((0, first, _STRUCTURE, Anchor((), root.id, root.node_type, "/")))
    pending = -1  # start of heading shells waiting for the next seed
    section = NodeType.SECTION
    ends = [*starts[1:], length]  # a section's region ends where the next one starts
    for sec, region_end in zip(sections, ends, strict=True):
        if search(text, sec.body_start, region_end):
            start = sec.start if pending < 0 else pending
            anchor = new(Anchor, (sec.section_path, sec.id, section, sec.canonical_path))
            seeds.append((start, region_end, _STRUCTURE, anchor))
            pending = -1
        elif pending < 0:
            pending = sec.start
    if not seeds or not any(p[3].node_type is NodeType.SECTION for p in seeds):
        return []
    if pending >= 0:
        s, _, source, anchor = seeds[-1]
        seeds[-1] = (s, length, source, anchor)
    return seeds


def structure_child_seeds(tree: StructureTree, parent: Piece) -> list[Piece]:
    """Children along the anchored section's body blocks, or [] if there is nothing to follow."""
    ps, pe, _, anchor, index = parent
    node_id = anchor.structure_node_id
    if node_id is None or not tree.has_blocks:
        return []
    blocks = [
        c
        for c in tree.children(node_id)
        if c.node_type in BLOCK_TYPES and c.end > ps and c.start < pe
    ]
    if not blocks:
        return []
    out: list[Piece] = []
    for i, block in enumerate(blocks):
        start = ps if i == 0 else max(block.start, ps)
        end = pe if i + 1 == len(blocks) else max(blocks[i + 1].start, ps)
        if end > start:
            out.append((start, end, _STRUCTURE, _anchor_of(block.id, tree), index))
    return out
