"""Markdown -> structure tree: the line scanner and the markdown-it builder."""

from __future__ import annotations

from hypothesis import given, settings

from ragline.adapters.structure.markdown import (
    LineScanStructureBuilder,
    MarkdownItStructureBuilder,
)
from ragline.domain.chunking import NodeType, StructureTree
from tests.chunking.markdown_gen import markdown_document

SCAN = LineScanStructureBuilder()
MDIT = MarkdownItStructureBuilder()

DOC = """Intro para.

# Title

Body under title.

## Sub ##

- item one
- item two

| a | b |
| - | - |
| 1 | 2 |

```python
# a comment, not a heading
x = 1
```

> quoted

### Deep

    indented code

# Second
"""


def _sections(tree: StructureTree) -> list[tuple[int, str, int, int, str | None]]:
    return [(n.level, n.title, n.start, n.end, n.parent_id) for n in tree.sections()]


def test_line_scan_finds_sections_with_offsets_and_nesting() -> None:
    tree = SCAN.build(DOC)
    secs = tree.sections()
    assert [(s.level, s.title) for s in secs] == [
        (1, "Title"),
        (2, "Sub"),
        (3, "Deep"),
        (1, "Second"),
    ]
    title, sub, deep, second = secs
    assert DOC[title.start :].startswith("# Title\n")
    assert title.end == second.start and sub.end == second.start and deep.end == second.start
    assert second.end == len(DOC)
    assert (sub.parent_id, deep.parent_id, second.parent_id) == (title.id, sub.id, "root")
    assert deep.section_path == ("Title", "Sub", "Deep")
    assert deep.canonical_path == "/s1/s1/s1" and second.canonical_path == "/s2"
    assert DOC[title.body_start :].startswith("\nBody under title.")


def test_line_scan_blocks_are_typed_and_owned_by_the_innermost_section() -> None:
    tree = SCAN.build(DOC, blocks=True)
    blocks = [
        (n.node_type, n.parent_id, DOC[n.start : n.end].strip().splitlines()[0])
        for n in tree.nodes
        if n.node_type not in (NodeType.DOCUMENT, NodeType.SECTION)
    ]
    sub = tree.sections()[1].id
    deep = tree.sections()[2].id
    assert blocks == [
        (NodeType.PARAGRAPH, "root", "Intro para."),
        (NodeType.PARAGRAPH, tree.sections()[0].id, "Body under title."),
        (NodeType.LIST, sub, "- item one"),
        (NodeType.TABLE, sub, "| a | b |"),
        (NodeType.CODE, sub, "```python"),
        (NodeType.QUOTE, sub, "> quoted"),
        (NodeType.CODE, deep, "indented code"),
    ]
    assert not SCAN.build(DOC, blocks=False).has_blocks


def test_markdown_it_agrees_on_this_document() -> None:
    assert _sections(MDIT.build(DOC)) == _sections(SCAN.build(DOC))
    kinds = [
        n.node_type
        for n in MDIT.build(DOC).nodes
        if n.node_type not in (NodeType.DOCUMENT, NodeType.SECTION)
    ]
    assert kinds == [
        NodeType.PARAGRAPH,
        NodeType.PARAGRAPH,
        NodeType.LIST,
        NodeType.TABLE,
        NodeType.CODE,
        NodeType.QUOTE,
        NodeType.CODE,
    ]


def test_markdown_it_knows_setext_headings() -> None:
    md = "Title\n=====\n\ntext\n\nSub\n---\n\nmore\n"
    assert [(s.level, s.title) for s in MDIT.build(md).sections()] == [(1, "Title"), (2, "Sub")]


def test_unclosed_fence_hides_headings_to_the_end() -> None:
    md = "# A\n\n```\n# inside\n"
    assert [s.title for s in SCAN.build(md).sections()] == ["A"]


@settings(max_examples=max(20, settings.default.max_examples // 5))
@given(markdown_document())
def test_both_builders_find_the_same_sections(md: str) -> None:
    assert _sections(SCAN.build(md, blocks=False)) == _sections(MDIT.build(md, blocks=False))
