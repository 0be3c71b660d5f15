"""`ragline status [TASK_ID]`: what the store says about parse runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.cli.app import DATA_DIR_OPTION, app, provided, run_session
from ragline.domain.parse_run import ParseRun

console = Console()


def run_json(run: ParseRun) -> dict[str, Any]:
    """One run as plain JSON (for scripts and tests)."""
    return {
        "task_id": run.task_id,
        "pipeline_status": run.pipeline_status.value,
        "stages": {
            stage.value: {
                "status": state.status.value,
                "duration_ms": state.duration_ms,
                "inherited": state.inherited,
            }
            for stage, state in run.stages_in_order()
        },
        "failed_stage": run.failed_stage.value if run.failed_stage else None,
        "recover_from_stage": run.recover_from_stage.value if run.recover_from_stage else None,
        "failure_reason": run.failure_reason.text if run.failure_reason else None,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "retry_of_task_id": run.retry_of_task_id,
        "superseded_by_task_id": run.superseded_by_task_id,
    }


@app.command()
def status(
    ctx: typer.Context,
    task_id: str | None = typer.Argument(None, help="One run; without it, the newest runs."),
    limit: int = typer.Option(20, "--limit", min=1, help="How many recent runs."),
    user: str | None = typer.Option(None, "--user", help="Only this user's runs."),
    dataset: str | None = typer.Option(None, "--dataset", help="Only this dataset's runs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Show parse runs: pipeline and stage statuses, failures, retry links (`--user` and
    `--dataset` scope them; without either, every tenant's)."""
    ctx.obj.choose(data_dir)
    container = ctx.obj.get()

    async def main() -> list[ParseRun]:
        list_runs = await provided(container.list_runs)
        runs: list[ParseRun] = await list_runs(task_id, limit, user_id=user, dataset_id=dataset)
        return runs

    runs = run_session(container, main)
    if task_id is not None and not runs:
        console.print(f"[red]no run with task_id {task_id}[/red]")
        raise typer.Exit(1)
    if as_json:
        sys.stdout.write(json.dumps([run_json(r) for r in runs], ensure_ascii=False) + "\n")
        return
    table = Table(title="parse runs")
    for column in ("task_id", "status", "stages", "failure", "retry of"):
        table.add_column(column)
    marks = {"SUCCESS": "✓", "FAILED": "✗", "PROCESSING": "…", "PENDING": "·"}
    for run in runs:
        stages = "".join(marks[state.status.value] for _, state in run.stages_in_order())
        table.add_row(
            run.task_id,
            run.pipeline_status.value,
            stages,
            run.failure_reason.text if run.failure_reason else "",
            run.retry_of_task_id or "",
        )
    console.print(table)
