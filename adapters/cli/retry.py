"""`ragline retry TASK_ID`: a new run that inherits every stage the failed run finished."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console

from ragline.adapters.cli.app import app

console = Console()


@app.command()
def retry(ctx: typer.Context, task_id: str = typer.Argument(..., help="A FAILED run.")) -> None:
    """Retry a failed run (is_retry + previous_task_id) and wait for its result."""
    try:
        result = asyncio.run(ctx.obj.get().retry(task_id))
    except LookupError as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(1) from None
    colour = "green" if result.task_status == "success" else "red"
    console.print(f"{result.task_id}: [{colour}]{result.task_status}[/{colour}]")
    if result.failure_reason:
        console.print(f"{result.failure_reason}\n{result.user_message or ''}")
        raise typer.Exit(1)
