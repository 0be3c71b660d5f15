"""`ragline chunk FILE [--plan NAME] [--json]`: how a file would be cut, before indexing.

Users tune plans with it. `--json` prints one object:
{"markdown", "parents": [{"text", "span": [start, end], "section_path", "source_type",
"children": [{"text", "span", "source_type"}]}]}, spans being offsets into "markdown".
Markdown and plain text only until parsers for other formats are wired in.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.cli.app import DATA_DIR_OPTION, app

_TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ""}


def result_json(result: Any) -> dict[str, Any]:
    """The preview object of a ChunkingResult (the exact `--json` shape)."""
    return {
        "markdown": result.markdown,
        "parents": [
            {
                "text": p.text,
                "span": [p.start, p.end],
                "section_path": list(p.section_path),
                "source_type": str(p.source_type),
                "children": [
                    {"text": c.text, "span": [c.start, c.end], "source_type": str(c.source_type)}
                    for c in p.children
                ],
            }
            for p in result.parents
        ],
    }


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
    ctx.obj.choose(data_dir)
    if file.suffix.lower() not in _TEXT_SUFFIXES:
        raise typer.BadParameter(
            f"{file.suffix} files need a parser; Markdown and plain text only for now",
            param_hint="FILE",
        )
    try:
        markdown = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"not UTF-8 text: {exc}", param_hint="FILE") from exc
    use_case = ctx.obj.get().chunk_document()
    if plan not in use_case.plan_names:
        raise typer.BadParameter(
            f"unknown plan {plan!r}; known: {', '.join(use_case.plan_names)}", param_hint="--plan"
        )
    result = use_case(markdown, plan)
    if as_json:
        sys.stdout.write(json.dumps(result_json(result), ensure_ascii=False) + "\n")
        return
    _print_table(result)


def _print_table(result: Any) -> None:
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
