"""`ragline status [TASK_ID]`: what the store says about parse runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.domain.parse_run import ParseRun


def run_json(run: ParseRun, record: ParsedLog | None = None) -> dict[str, object]:
    """One run as plain JSON (for scripts and tests), with the parse backend and warnings."""
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
        "parse_backend": record.parse_backend if record else None,
        "parse_warnings": list(record.parse_warnings) if record else [],
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
    entry = entry_of(ctx, data_dir)

    async def main() -> tuple[list[ParseRun], dict[str, ParsedLog]]:
        list_runs = await entry.use_cases.list_runs()
        runs: list[ParseRun] = await list_runs(task_id, limit, user_id=user, dataset_id=dataset)
        records = await list_runs.parse_records([run.task_id for run in runs])
        return runs, records

    runs, records = run_session(entry, main)
    if task_id is not None and not runs:
        Console(stderr=True).print(f"[red]no run with task_id {task_id}[/red]")
        raise typer.Exit(1)
    if as_json:
        rows = [run_json(r, records.get(r.task_id)) for r in runs]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return
    _show(runs, records, Console())


COLUMNS = ("task_id", "status", "stages", "parsed by", "failure", "retry of")
MARKS = {"SUCCESS": "✓", "FAILED": "✗", "PROCESSING": "…", "PENDING": "·"}


def _cells(run: ParseRun, record: ParsedLog | None) -> tuple[str, ...]:
    return (
        run.task_id,
        run.pipeline_status.value,
        "".join(MARKS[state.status.value] for _, state in run.stages_in_order()),
        _parsed_by(record),
        " ".join(run.failure_reason.text.split()) if run.failure_reason else "",
        run.retry_of_task_id or "",
    )


def _show(runs: list[ParseRun], records: dict[str, ParsedLog], console: Console) -> None:
    """A pipe gets plain tab-separated rows; a terminal the table when it fits, else one
    record per run. A task id is never cut (an id wider than the terminal folds)."""
    rows = [_cells(run, records.get(run.task_id)) for run in runs]
    if not console.is_terminal:
        for row in (COLUMNS, *rows):
            sys.stdout.write("\t".join(row) + "\n")
        return
    table = Table(title="parse runs")
    for column in COLUMNS:
        wide = column in ("task_id", "status", "stages", "retry of")
        table.add_column(column, no_wrap=wide, overflow="fold")
    for row in rows:
        table.add_row(*row)
    natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
    if natural <= console.width:
        console.print(table)
        return
    for task_id, status, stages, parsed_by, failure, retry_of in rows:
        console.print(Text(f"{task_id}  {status}  {stages}", overflow="fold"))
        details = (("parsed by", parsed_by), ("failure", failure), ("retry of", retry_of))
        for label, value in details:
            if value:
                console.print(Text(f"  {label}: {value}", overflow="fold"))


def _parsed_by(record: ParsedLog | None) -> str:
    if record is None or record.parse_backend is None:
        return ""
    fallback = next((w for w in record.parse_warnings if "fell back" in w), None)
    return f"{record.parse_backend} ({fallback})" if fallback else record.parse_backend
