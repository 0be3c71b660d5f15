"""`ragline chunks DOC_ID`: a document's chunks as stored, parents with their children.

What `GET /api/v1/documents/{doc_id}/chunks` shows, read through the same use case: section
path, spans in the Markdown, index statuses, whether a chunk is switched off or was edited.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.documents import ChunkFamily, DocumentNotFound
from ragline.application.ports.repositories.chunks import ChunkRecord

console = Console()
PAGE = 100


def chunk_json(c: ChunkRecord) -> dict[str, object]:
    return {
        "chunk_id": c.chunk_id,
        "parent_id": c.parent_id,
        "order_index": c.order_index,
        "section_path": list(c.section_path),
        "span_start": c.span_start,
        "span_end": c.span_end,
        "dense_status": None if c.dense_status is None else c.dense_status.value,
        "sparse_status": None if c.sparse_status is None else c.sparse_status.value,
        "enabled": c.enabled,
        "edited": c.edited,
        "text": c.text,
    }


def _status(c: ChunkRecord) -> str:
    if not c.enabled:
        return "off"
    if c.dense_status is None:
        return ""
    return f"{c.dense_status.value}/{c.sparse_status.value if c.sparse_status else '-'}"


@app.command("chunks")
def chunks(
    ctx: typer.Context,
    doc_id: str = typer.Argument(..., help="The document (original_file_id)."),
    user: str = typer.Option("1", "--user", help="Whose document (user_id)."),
    dataset: str = typer.Option("1", "--dataset", help="Which dataset (dataset_id)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """A document's chunks in order: each parent and its children, with section path, span,
    dense/sparse status, and whether it is switched off or edited. Exit 1: no such document."""
    entry = entry_of(ctx, data_dir)

    async def main() -> list[ChunkFamily]:
        listing = await entry.use_cases.list_chunks()
        families: list[ChunkFamily] = []
        cursor: str | None = None
        while True:
            page = await listing(user, dataset, doc_id, cursor=cursor, limit=PAGE)
            families.extend(page.families)
            cursor = page.next_cursor
            if cursor is None:
                return families

    try:
        families = run_session(entry, main)
    except DocumentNotFound:
        console.print(f"[red]no document {doc_id} in dataset {dataset} of user {user}[/red]")
        raise typer.Exit(1) from None
    if as_json:
        payload = {
            "doc_id": doc_id,
            "parents": [
                {"parent": chunk_json(f.parent), "children": [chunk_json(c) for c in f.children]}
                for f in families
            ],
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    table = Table("chunk_id", "section", "span", "status", "edited", "text")
    for family in families:
        for c in (family.parent, *family.children):
            indent = "  " if c.parent_id is not None else ""
            table.add_row(
                indent + c.chunk_id,
                " > ".join(c.section_path),
                f"{c.span_start}-{c.span_end}",
                _status(c),
                "yes" if c.edited else "",
                " ".join(c.text.split())[:60],
            )
    console.print(table)
    children = sum(len(f.children) for f in families)
    console.print(f"{len(families)} parents, {children} children")
