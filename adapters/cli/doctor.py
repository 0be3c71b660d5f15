"""`ragline doctor`: what is configured, and whether each part answers."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.cli.app import app

console = Console()


@app.command()
def doctor(ctx: typer.Context) -> None:
    """Show the settings (secrets hidden) and check every configured adapter."""
    services = ctx.obj.get()
    settings_table = Table(title="settings")
    settings_table.add_column("name")
    settings_table.add_column("value")
    for name, value in services.settings.model_dump().items():
        settings_table.add_row(name, str(value))
    console.print(settings_table)
    checks = asyncio.run(services.doctor())
    table = Table(title="checks")
    for column in ("part", "adapter", "status", "detail"):
        table.add_column(column)
    for check in checks:
        mark = "[green]ok[/green]" if check.ok else "[red]FAIL[/red]"
        table.add_row(check.part, check.adapter, mark, check.detail)
    console.print(table)
    if not all(check.ok for check in checks):
        raise typer.Exit(1)
