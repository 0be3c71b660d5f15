"""`ragline outbox list|redrive`: results waiting in the outbox, and redriving DEAD ones.

A DEAD row is a result the relay gave up on (RESULT_NOTIFY_FAILED after its last attempt);
it is still owed. `redrive` sets it back to PENDING with fresh attempts (a compare-and-set
DEAD -> PENDING), and the next relay pass of a running worker publishes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.outbox import RedriveReport, UnknownOutboxStatus
from ragline.application.ports.repositories.outbox import OutboxMessage

console = Console()
outbox = typer.Typer(
    help="Results waiting to be published; redrive DEAD ones.", no_args_is_help=True
)
app.add_typer(outbox, name="outbox")


def message_json(row: OutboxMessage) -> dict[str, object]:
    return {
        "id": row.id,
        "task_id": row.task_id,
        "status": row.status,
        "attempts": row.attempts,
        "next_attempt_at": row.next_attempt_at.isoformat(),
        "last_error": row.last_error,
        "routing_key": row.routing_key,
        "topic": row.topic,
        "claimed_by": row.claimed_by,
        "claimed_until": row.claimed_until.isoformat() if row.claimed_until else None,
        "updated_at": row.updated_at.isoformat() if row.updated_at else None,
    }


def report_json(report: RedriveReport) -> dict[str, object]:
    return {"redriven": report.redriven, "refused": report.refused}


@outbox.command("list")
def list_outbox(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", help="PENDING, SENT or DEAD."),
    task_id: str | None = typer.Option(None, "--task-id", help="Only this task's result."),
    limit: int = typer.Option(100, "--limit", min=1, max=1000, help="How many rows."),
    after_id: int = typer.Option(0, "--after-id", min=0, help="Rows after this id (paging)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Outbox rows in id order, with attempts, the next attempt and the last error."""
    entry = entry_of(ctx, data_dir)

    async def main() -> tuple[list[OutboxMessage], dict[str, int]]:
        manage = await entry.use_cases.manage_outbox()
        rows = await manage.list(status, task_id, after_id=after_id, limit=limit)
        return rows, dict(await manage.counts())

    try:
        rows, counts = run_session(entry, main)
    except UnknownOutboxStatus as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        payload = {"counts": counts, "rows": [message_json(r) for r in rows]}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    table = Table("id", "task_id", "status", "attempts", "next attempt", "last error")
    for row in rows:
        table.add_row(
            str(row.id),
            row.task_id,
            row.status,
            str(row.attempts),
            row.next_attempt_at.isoformat(timespec="seconds"),
            (row.last_error or "")[:80],
        )
    console.print(table)
    console.print(", ".join(f"{name} {count}" for name, count in counts.items()))


@outbox.command("redrive")
def redrive(
    ctx: typer.Context,
    task_ids: list[str] = typer.Option(
        [], "--task-id", help="A DEAD result to publish again (repeatable)."
    ),
    all_dead: bool = typer.Option(False, "--all-dead", help="Every DEAD result."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Set DEAD results back to PENDING (fresh attempts); a running worker publishes them.
    Exit 1 when a named task_id was not DEAD."""
    if bool(task_ids) == all_dead:
        console.print("[red]give --task-id ID (one or more) or --all-dead[/red]")
        raise typer.Exit(2)
    entry = entry_of(ctx, data_dir)

    async def main() -> RedriveReport:
        manage = await entry.use_cases.manage_outbox()
        if all_dead:
            found: RedriveReport = await manage.redrive_all_dead()
        else:
            found = await manage.redrive(task_ids)
        return found

    report = run_session(entry, main)
    if as_json:
        sys.stdout.write(json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n")
    else:
        console.print(f"redriven: {len(report.redriven)}")
        for task_id, why in report.refused.items():
            console.print(f"[yellow]{task_id}: {why}[/yellow]")
    if report.refused and not all_dead:
        raise typer.Exit(1)
