"""md/markdown: passthrough. The pipeline keeps the source as its Markdown; this only validates."""

from __future__ import annotations

import re
from pathlib import Path

from ragline.adapters.parser.builtin.text_decoding import (
    decode_utf8,
    read_bounded,
    reject_binary,
    reject_long_lines,
)
from ragline.application.ports.parser import ParsedDocument, ParseOptions

_ATX_H1 = re.compile(r"^ {0,3}# +(.+?)(?: +#+)? *$", re.MULTILINE)


def parse_markdown(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    read_bounded(source.stat().st_size, options.limits.max_output_chars, file_type)
    data = source.read_bytes()
    reject_binary(data, file_type)
    text = decode_utf8(data, file_type)
    reject_long_lines(text, options.limits.max_line_chars, file_type)
    match = _ATX_H1.search(text, 0, 1_000_000)
    warnings = [] if text.strip() else ["empty document"]
    return ParsedDocument(
        markdown=text, title=match.group(1).strip() if match else None, warnings=warnings
    )
