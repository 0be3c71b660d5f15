"""`ragline chunk FILE [--plan NAME] [--json]`: how a file would be cut, before indexing.

Users tune plans with it. Any supported format (md, txt, html, docx, pdf): other formats
are parsed first, as CLEANING would. `--json` prints one object: {"markdown",
"parents": [{"text", "span": [start, end], "section_path", "source_type", "children":
[{"text", "span", "source_type"}]}]}, spans being offsets into "markdown".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.chunking.preview import preview_json
from ragline.application.debug import ExtractionFailed
from ragline.domain.chunking import ChunkingResult


def _preview(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@app.command("chunk")
def chunk(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True),
    plan: str = typer.Option("default", "--plan", help="Chunk plan preset name."),
    as_json: bool = typer.Option(False, "--json", help="Print the chunks as one JSON object."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Show how FILE would be cut into parent and child chunks (nothing is indexed)."""
    entry = entry_of(ctx, data_dir)
    plans = entry.use_cases.chunk_document().plan_names
    if plan not in plans:
        raise typer.BadParameter(
            f"unknown plan {plan!r}; known: {', '.join(plans)}", param_hint="--plan"
        )
    file_type = file.suffix.lower().lstrip(".") or "txt"

    async def main() -> ChunkingResult:
        preview = await entry.use_cases.preview_chunks()
        result: ChunkingResult = await preview.file(file.read_bytes(), file_type, plan)
        return result

    try:
        result = run_session(entry, main)
    except ExtractionFailed as failure:
        raise typer.BadParameter(
            f"the parser could not read {file.name}: {failure}", param_hint="FILE"
        ) from None
    if as_json:
        sys.stdout.write(json.dumps(preview_json(result), ensure_ascii=False) + "\n")
        return
    _print_table(result)


def _print_table(result: ChunkingResult) -> None:
    console = Console()
    table = Table(
        title=f"plan {result.plan_name}: {len(result.parents)} parents, "
        f"{result.child_count} children"
    )
    for column in ("#", "span", "section", "source", "chars", "children", "text"):
        table.add_column(column, overflow="fold")
    for p in result.parents:
        table.add_row(
            str(p.item_index),
            f"{p.start}-{p.end}",
            " / ".join(p.section_path),
            str(p.source_type),
            str(len(p.text)),
            str(len(p.children)),
            _preview(p.text),
        )
    console.print(table)
    r = result.report
    console.print(
        f"path {r.parent_path}; dropped: {r.blank_dropped} blank, "
        f"{sum(r.duplicates_dropped)} duplicates; model fallbacks: {r.fallbacks}"
    )
