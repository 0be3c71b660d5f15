"""`ragline retry TASK_ID`: a new run that inherits every stage the failed run finished."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.access import Caller, ReferenceRefused
from ragline.application.tasks import TaskResult, TaskStatus

console = Console()


@app.command()
def retry(
    ctx: typer.Context,
    task_id: str = typer.Argument(..., help="A FAILED run."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Retry a failed run (is_retry + previous_task_id) and wait for its result."""
    entry = entry_of(ctx, data_dir)

    async def main() -> TaskResult:
        retry_run = await entry.use_cases.retry_run()
        bus = await entry.bus()
        if not bus.in_process:  # the workers answer; building one here (models) is waste
            answer: TaskResult = await retry_run(Caller.service(), task_id)  # the operator
            return answer
        worker = await entry.worker(consumers=1)
        async with worker.running():
            result: TaskResult = await retry_run(Caller.service(), task_id)
            return result

    try:
        result = run_session(entry, main)
    except (LookupError, ReferenceRefused) as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(1) from None
    status = result.task_status.value
    colour = "green" if result.task_status is TaskStatus.SUCCESS else "red"
    console.print(f"{result.task_id}: [{colour}]{status}[/{colour}]")
    if result.failure_reason:
        console.print(f"{result.failure_reason}\n{result.user_message or ''}")
        raise typer.Exit(1)
