"""csv / tsv -> one Markdown pipe table, in header-repeating blocks (stdlib csv module).

The bytes are decoded like txt (UTF-8, UTF-16 by BOM, else GB18030). A CSV has no sheet name
(and the file the parser sees is a temp copy), so the table sits at the document root: its
section path is empty and the hit's source names the file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ragline.adapters.parser.builtin.output_budget import OutputBudget
from ragline.adapters.parser.builtin.table_blocks import render_rows
from ragline.adapters.parser.builtin.text_decoding import (
    decode_text,
    read_bounded,
    reject_binary,
)
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed, ParseOptions

MAX_FIELD_CHARS = 1_000_000


def parse_delimited(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    limits = options.limits
    read_bounded(source.stat().st_size, limits.max_output_chars, file_type)
    data = source.read_bytes()
    reject_binary(data, file_type)
    text, codec = decode_text(data, file_type)
    del data
    delimiter = "\t" if file_type == "tsv" else _sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    previous = csv.field_size_limit(min(MAX_FIELD_CHARS, limits.max_line_chars))  # global
    try:
        markdown = render_rows(reader, OutputBudget(limits.max_output_chars), file_type)
    except csv.Error as exc:
        raise ParseEngineFailed(
            f"malformed .{file_type} at line {reader.line_num}: {exc}"[:300]
        ) from None
    finally:
        csv.field_size_limit(previous)
    warnings = [] if codec == "utf-8" else [f"decoded as {codec}"]
    if not markdown:
        warnings.append("empty document")
    return ParsedDocument(
        markdown=markdown.rstrip("\n") + "\n" if markdown else "", warnings=warnings
    )


def _sniff_delimiter(text: str) -> str:
    """Comma unless the first line clearly uses semicolons (European exports) or tabs."""
    first = text[: text.find("\n") if "\n" in text else 4096][:4096]
    counts = {d: first.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts[","] else ","
