"""xlsx -> Markdown with openpyxl's read-only (streaming) reader: one `#` section per sheet.

Formulas show their cached values (`data_only=True`), as the spreadsheet last displayed them.
The sheet's declared dimension is ignored (`reset_dimensions`): a hostile
`<dimension ref="A1:XFD1048576"/>` would otherwise make openpyxl pad every row to 16,384
cells and append a million empty rows.
"""

from __future__ import annotations

import warnings as warnings_module
import zipfile
from pathlib import Path

from ragline.adapters.parser.builtin.output_budget import OutputBudget
from ragline.adapters.parser.builtin.table_blocks import MAX_COLUMNS, TableBlocks, cell_text
from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import ParsedDocument, ParseEngineFailed, ParseOptions

MAX_SHEETS = 1000


def parse_xlsx(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    # Imported here, not at module level: openpyxl imports numpy when present, and OpenBLAS
    # reserves memory per core at import, which a worker started under a small address-space
    # limit cannot afford. Only workers that really see a workbook pay it.
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    limits = options.limits
    check_zip(source, ZipBudget(min(512 * 1024**2, limits.max_memory_bytes // 4)), file_type)
    try:
        with warnings_module.catch_warnings():  # "extension not supported" and the like
            warnings_module.simplefilter("ignore")
            book = openpyxl.load_workbook(source, read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError) as exc:
        raise ParseEngineFailed(f"not a valid {file_type} workbook ({exc})"[:300]) from None
    try:
        sheets = book.worksheets
        if len(sheets) > MAX_SHEETS:
            raise ParseEngineFailed(f"workbook has {len(sheets)} sheets (limit {MAX_SHEETS})")
        budget = OutputBudget(limits.max_output_chars)
        out: list[str] = []
        warnings: list[str] = []
        for sheet in sheets:
            name = " ".join(str(sheet.title).split()) or "Sheet"
            heading = f"# {name}\n\n"
            budget.spend(len(heading), file_type)
            out.append(heading)
            table = TableBlocks(out, budget, file_type)
            if hasattr(sheet, "reset_dimensions"):
                sheet.reset_dimensions()
            dropped = False
            for row in sheet.iter_rows(values_only=True):
                if len(row) > MAX_COLUMNS and not dropped:
                    dropped = any(v is not None for v in row[MAX_COLUMNS:])
                table.add([cell_text(v) for v in row[:MAX_COLUMNS]])
            table.close()
            if dropped or table.truncated_columns:
                warnings.append(f"sheet {name!r}: columns beyond {MAX_COLUMNS} dropped")
        title = book.properties.title if book.properties is not None else None
    finally:
        book.close()
    markdown = "".join(out).rstrip("\n") + "\n" if out else ""
    if not any(line.startswith("|") for line in markdown.splitlines()):
        warnings.append("empty document")
    return ParsedDocument(markdown=markdown, title=title or None, warnings=warnings)
