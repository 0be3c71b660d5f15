"""GFM pipe tables, shared by the HTML and DOCX parsers."""

from __future__ import annotations

import re
from collections.abc import Sequence

_WHITESPACE = re.compile(r"\s+")


def table_cell(text: str) -> str:
    """One-line cell text: whitespace collapsed, pipes escaped (a raw pipe splits the cell)."""
    return _WHITESPACE.sub(" ", text).strip().replace("|", "\\|")


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """Render rows (first row = header, as GFM requires one) as a pipe table; '' if empty."""
    rows = [list(r) for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    padded = [[table_cell(c) for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "|".join([" --- "] * width) + "|"]
    lines.extend("| " + " | ".join(r) + " |" for r in padded[1:])
    return "\n".join(lines)
