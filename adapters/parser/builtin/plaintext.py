"""txt: decode (UTF-8, UTF-16 by BOM, GB18030), normalise newlines, escape block markers."""

from __future__ import annotations

from pathlib import Path

from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.text_decoding import (
    decode_text,
    normalise_newlines,
    read_bounded,
    reject_binary,
    reject_long_lines,
)
from ragline.application.ports.parser import ParsedDocument, ParseOptions


def parse_text(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    read_bounded(source.stat().st_size, options.limits.max_output_chars, file_type)
    data = source.read_bytes()
    reject_binary(data, file_type)
    text, codec = decode_text(data, file_type)
    del data
    text = normalise_newlines(text).replace("\x00", "")
    reject_long_lines(text, options.limits.max_line_chars, file_type)
    warnings = [] if codec == "utf-8" else [f"decoded as {codec}"]
    if not text.strip():
        warnings.append("empty document")
    head = text.lstrip()[:200].split("\n", 1)
    title = head[0].strip() if len(head) == 2 and len(head[0]) <= 120 else None
    return ParsedDocument(markdown=escape_block_markers(text), title=title, warnings=warnings)
