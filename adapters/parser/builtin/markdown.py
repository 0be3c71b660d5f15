"""md/markdown: passthrough. The pipeline keeps the source as its Markdown; this only validates.

The work is `text_stream.stream_markdown` (in pieces, into a sink); this is its old shape,
one Markdown str, for callers in-process."""

from __future__ import annotations

from pathlib import Path

from ragline.adapters.parser.builtin.text_stream import stream_markdown
from ragline.application.ports.parser import ParsedDocument, ParseOptions, collected


def parse_markdown(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    return collected(stream_markdown, source, file_type, options)
