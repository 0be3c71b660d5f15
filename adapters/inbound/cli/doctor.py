"""`ragline doctor`: what is configured, and whether each part answers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.adapters.logs.line_format import redacted
from ragline.application.health import Check

console = Console()


def _rows(values: Mapping[str, object], prefix: str = "") -> list[tuple[str, object]]:
    """One row a setting, an adapter's nested settings as `kafka.group_id`."""
    rows: list[tuple[str, object]] = []
    for name, value in values.items():
        if isinstance(value, Mapping):
            rows += _rows(value, f"{prefix}{name}.")
        else:
            rows.append((prefix + name, value))
    return rows


@app.command()
def doctor(ctx: typer.Context, data_dir: Path | None = DATA_DIR_OPTION) -> None:
    """Show the settings (secrets hidden) and check every configured adapter."""
    entry = entry_of(ctx, data_dir)
    settings_table = Table(title="settings")
    settings_table.add_column("name")
    settings_table.add_column("value")
    settings = entry.settings()
    for name, value in _rows(settings.model_dump()):
        settings_table.add_row(name, redacted(value))
    console.print(settings_table)
    console.print(f"API key encryption key: {settings.secret_key_source}")

    async def main() -> list[Check]:
        check_health = await entry.use_cases.check_health()
        checks: list[Check] = await check_health()
        return checks

    checks = run_session(entry, main)
    table = Table(title="checks")
    for column in ("part", "adapter", "status", "detail"):
        table.add_column(column)
    for check in checks:
        mark = "[green]ok[/green]" if check.ok else "[red]FAIL[/red]"
        table.add_row(check.part, check.adapter, mark, check.detail)
    console.print(table)
    for check in checks:
        if check.advice:
            console.print(f"[yellow]advice[/yellow] ({check.part}): {check.advice}")
    if not all(check.ok for check in checks):
        raise typer.Exit(1)
