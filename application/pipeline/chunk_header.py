"""Contextual chunk headers: what a child chunk is indexed as, besides what it shows.

A child of ~400 characters rarely names its subject ("Set it to 0002 ..."): the section it
sits in does. Prepending the section path (whose first part is the document's title when
it has one; else the file name) to the text that is embedded and keyword-indexed lets a
question that names the subject find it. Only the index sees the header: the chunk row,
and so every hit, keeps the plain text.
"""

from __future__ import annotations

from pathlib import PurePath

from ragline.application.ports.repositories.chunks import ChunkRecord

SEPARATOR = " > "


def chunk_header(chunk: ChunkRecord, source_filename: str) -> str:
    """The section path of the chunk, or the file's stem when it has no section."""
    parts = [p.strip() for p in chunk.section_path if p.strip()]
    if not parts:
        stem = PurePath(source_filename).stem.strip()
        return stem
    return SEPARATOR.join(parts)


def indexed_text(chunk: ChunkRecord, source_filename: str, headers: bool) -> str:
    """The text the dense, sparse and BM25 indexes get for a child chunk."""
    if not headers:
        return chunk.text
    header = chunk_header(chunk, source_filename)
    return f"{header}\n\n{chunk.text}" if header else chunk.text
