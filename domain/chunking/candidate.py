"""Chunk candidates: what the engine produces, in memory, before anything is written.

NamedTuples rather than frozen attrs classes: a large document yields tens of thousands of
candidates and a NamedTuple is built about four times faster, immutable all the same.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import NamedTuple

from ragline.domain.chunking.structure import NodeType


class SourceType(StrEnum):
    """Which strategy produced a candidate (ORIGINAL: the text as given, not cut)."""

    ORIGINAL = "ORIGINAL"
    STRUCTURE = "STRUCTURE"
    RECURSIVE = "RECURSIVE"
    SEMANTIC = "SEMANTIC"
    LLM = "LLM"


class Anchor(NamedTuple):
    """Where in the structure tree a piece comes from (shared by all pieces cut from it)."""

    section_path: tuple[str, ...]
    structure_node_id: str | None
    node_type: NodeType | None
    canonical_path: str


NO_ANCHOR = Anchor((), None, None, "/")


class ChunkCandidate(NamedTuple):
    """A child chunk: a trimmed, non-empty slice of its parent, `text == markdown[start:end]`.

    The text is a view: it is sliced from the parent's text (`parent_text`, which starts at
    `parent_start` in the Markdown) when read, so a document's children do not hold a second
    copy of it in memory.
    """

    section_path: tuple[str, ...]
    structure_node_id: str | None
    node_type: NodeType | None
    canonical_path: str
    item_index: int
    source_type: SourceType
    start: int
    end: int
    parent_text: str
    parent_start: int

    @property
    def text(self) -> str:
        offset = self.parent_start
        return self.parent_text[self.start - offset : self.end - offset]

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)


class ParentBlock(NamedTuple):
    """A parent chunk (the context handed to the model) and the children that retrieve it.

    Every child's text is `markdown[child.start:child.end]` and lies inside the parent's span.
    """

    section_path: tuple[str, ...]
    structure_node_id: str | None
    node_type: NodeType | None
    canonical_path: str
    item_index: int
    text: str
    source_type: SourceType
    start: int
    end: int
    children: tuple[ChunkCandidate, ...]

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)


def chunk_id(document_id: str, span: tuple[int, int], text: str) -> str:
    """A stable id for a chunk: the same document, span and text always give the same id."""
    digest = hashlib.sha256()
    digest.update(document_id.encode("utf-8"))
    digest.update(f"\x00{span[0]}:{span[1]}\x00".encode("ascii"))
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()
