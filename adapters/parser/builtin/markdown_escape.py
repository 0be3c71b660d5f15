"""Keep plain text plain: escape what would start Markdown block structure at a line start."""

from __future__ import annotations

import re

# A line of plain text must not turn into Markdown structure: escape what would start a
# heading, quote, list, fence, table, HTML block or setext underline. Inline text is left alone.
# The patterns start with a literal "\n" (text is prefixed with one) so the regex engine can
# skip ahead with a fast literal scan: a (?m)^ anchor is 30x slower on a 50 MB line.
_BLOCK_MARKER = re.compile(r"\n( {0,3})([#>+\-*=|<_[]|`{3}|~{3})")
_ORDERED_MARKER = re.compile(r"\n( {0,3}\d{1,9})([.)])(?=[ \t\n]|\Z)")


def escape_block_markers(text: str) -> str:
    head = text[:16]  # the first line has no "\n" before it: escape it on a short copy
    escaped_head = escape_block_markers_lines("\n" + head)[1:]
    if escaped_head != head:
        text = escaped_head + text[16:]
    return escape_block_markers_lines(text)


def escape_block_markers_lines(text: str) -> str:
    """Escape markers at the start of every line that follows a newline."""
    text = _BLOCK_MARKER.sub(r"\n\1\\\2", text)
    return _ORDERED_MARKER.sub(r"\n\1\\\2", text)
