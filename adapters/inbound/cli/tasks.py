"""`ragline tasks redrive`: task dead letters back onto the task topic.

A task dead letter was set aside by a worker (unreadable, DUPLICATE_TASK, an unexpected
error) or rejected by the broker; nothing answers it until it is redriven. The workers take
it again from the task topic; what is still the message's fault is set aside again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.redrive import TaskRedriveReport

console = Console()
tasks = typer.Typer(help="Parse tasks on the broker: redrive dead letters.", no_args_is_help=True)
app.add_typer(tasks, name="tasks")


@tasks.command("redrive")
def redrive(
    ctx: typer.Context,
    limit: int = typer.Option(1000, "--limit", min=1, max=100_000, help="At most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Publish the task dead letters to the task topic again (metric
    ragline_task_redrives_total); stops once none arrives for 2 s."""
    entry = entry_of(ctx, data_dir)

    async def main() -> TaskRedriveReport:
        redrive_tasks = await entry.use_cases.redrive_tasks()
        report: TaskRedriveReport = await redrive_tasks(limit)
        return report

    report = run_session(entry, main)
    if as_json:
        sys.stdout.write(json.dumps({"redriven": report.redriven}, ensure_ascii=False) + "\n")
        return
    console.print(f"redriven: {len(report.redriven)}")
    for task_id in report.redriven:
        console.print(task_id or "(no readable task_id)")
