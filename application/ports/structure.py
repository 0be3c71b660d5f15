"""Structure port: turn a document's Markdown into its section/block tree.

Adapters locate headings and body blocks (with character offsets into the Markdown); the
domain's `build_tree` nests them. Parsers of other formats may build the tree from their own
signals and pass it along with the Markdown.
"""

from __future__ import annotations

from typing import Protocol

from ragline.domain.chunking import StructureTree


class StructureBuilder(Protocol):
    def build(self, markdown: str, *, blocks: bool = True) -> StructureTree:
        """The tree of `markdown`. With `blocks=False` only sections are located (cheaper:
        the default chunk plans need no block nodes)."""
        ...
