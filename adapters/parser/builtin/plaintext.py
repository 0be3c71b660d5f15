"""txt: decode (UTF-8, UTF-16 by BOM, GB18030), normalise newlines, escape block markers.

The work is `text_stream.stream_text` (in pieces, into a sink); this is its old shape, one
Markdown str, for callers in-process."""

from __future__ import annotations

from pathlib import Path

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.text_stream import stream_text
from ragline.application.ports.parser import ParsedDocument, ParseOptions, collected

__all__ = ["escape_block_markers", "parse_text"]


def parse_text(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    return collected(stream_text, source, file_type, options)
