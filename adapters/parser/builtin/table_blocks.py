"""Rows -> Markdown pipe tables cut into blocks that each repeat the header row.

A spreadsheet is one long table; chunking cuts it at blank lines into ~512-character children.
Emitting the rows as blocks of at most `BLOCK_CHARS`, each with the header and its separator,
means every child chunk (a run of whole blocks) still names its columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragline.adapters.parser.builtin.gfm import table_cell
from ragline.adapters.parser.builtin.output_budget import OutputBudget

BLOCK_CHARS = 480
"""Under the default plan's 512-character child, so a child never holds a headerless slice."""
MAX_COLUMNS = 512
"""Columns beyond this are dropped (with a warning): a row that wide is not a table to read."""


class TableBlocks:
    """Accumulates one table's rows and renders them block by block into `out`.

    The first non-empty row is the header. Trailing empty cells are trimmed and wholly empty
    rows skipped, so a sparse sheet costs what it holds, not what it declares.
    """

    def __init__(self, out: list[str], budget: OutputBudget, what: str) -> None:
        self._out = out
        self._budget = budget
        self._what = what
        self._header: list[str] | None = None
        self._width = 0
        self._header_text = ""
        self._rows: list[str] = []
        self._size = 0
        self.rows = 0
        self.truncated_columns = False

    def add(self, cells: Sequence[str]) -> None:
        end = len(cells)
        while end and not cells[end - 1]:
            end -= 1
        if not end:
            return
        if end > MAX_COLUMNS:
            end = MAX_COLUMNS
            self.truncated_columns = True
        row = [table_cell(c) for c in cells[:end]]
        if self._header is None:
            self._header = row
            self._width = len(row)
            self._header_text = (
                "| " + " | ".join(row) + " |\n|" + "|".join([" --- "] * len(row)) + "|\n"
            )
            return
        if len(row) > self._width:  # a row wider than the header: widen the header too
            self.flush()
            self._header.extend([""] * (len(row) - self._width))
            self._width = len(row)
            self._header_text = (
                "| "
                + " | ".join(self._header)
                + " |\n|"
                + "|".join([" --- "] * self._width)
                + "|\n"
            )
        elif len(row) < self._width:
            row.extend([""] * (self._width - len(row)))
        line = "| " + " | ".join(row) + " |\n"
        if self._rows and len(self._header_text) + self._size + len(line) > BLOCK_CHARS:
            self.flush()
        self._rows.append(line)
        self._size += len(line)
        self.rows += 1

    def flush(self) -> None:
        """Emit the pending rows as one block (header, separator, rows, blank line)."""
        if not self._rows:
            return
        block = self._header_text + "".join(self._rows) + "\n"
        self._budget.spend(len(block), self._what)
        self._out.append(block)
        self._rows = []
        self._size = 0

    def close(self) -> None:
        """Flush; a table with a header and no body rows is shown as the header alone."""
        if self._header is not None and self.rows == 0:
            self._budget.spend(len(self._header_text) + 1, self._what)
            self._out.append(self._header_text + "\n")
        self.flush()


def cell_text(value: object) -> str:
    """A cell value as text: integral floats without '.0', dates in ISO form, booleans as
    spreadsheets show them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        text = isoformat()
        return text[:-9] if isinstance(text, str) and text.endswith("T00:00:00") else str(text)
    return str(value)


def render_rows(rows: Iterable[Sequence[str]], budget: OutputBudget, what: str) -> str:
    """All rows of one table as header-repeating blocks."""
    out: list[str] = []
    table = TableBlocks(out, budget, what)
    for row in rows:
        table.add(row)
    table.close()
    return "".join(out)
