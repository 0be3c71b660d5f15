"""`ragline ingest PATH...`: every file through the real pipeline, with live progress."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ragline.adapters.inbound.cli.app import (
    DATA_DIR_OPTION,
    app,
    entry_of,
    lazy_entry,
    run_session,
)
from ragline.adapters.inbound.cli.walk import find_sources
from ragline.adapters.inbound.entry import Entry
from ragline.application.access import ReferenceRefused
from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import FileAction, FileOutcome, IngestSummary
from ragline.domain.parse_run import STAGE_ORDER, Stage, StageStatus

console = Console(stderr=True)


class ProgressObserver:
    """Draws one bar for the files and one per stage; counts a stage when it ends."""

    def __init__(self, progress: Progress, total: int) -> None:
        self._progress = progress
        self._files = progress.add_task("files", total=total)
        self._stages: dict[Stage, TaskID] = {
            stage: progress.add_task(f"  {stage.value.lower()}", total=total)
            for stage in STAGE_ORDER
        }
        self._done: set[tuple[str, Stage]] = set()

    def file_submitted(self, source: SourceFile, action: FileAction, task_id: str) -> None:
        if action is not FileAction.NEW:
            self._progress.console.log(f"{action.value}: {source.relative_name}")

    def stage_changed(self, task_id: str, stage: Stage, status: StageStatus) -> None:
        if (
            status in (StageStatus.SUCCESS, StageStatus.FAILED)
            and (task_id, stage) not in self._done
        ):
            self._done.add((task_id, stage))
            self._progress.advance(self._stages[stage])

    def file_finished(self, outcome: FileOutcome) -> None:
        self._progress.advance(self._files)
        if outcome.status == "failed":
            self._progress.console.log(
                f"[red]failed[/red] {outcome.source.relative_name}: {outcome.failure_reason}"
            )


WIDE_COLUMNS = 150
"""From this terminal width on, the summary also has a column per stage."""

STAGE_HEADERS = {stage: f"{stage.label} ms" for stage in STAGE_ORDER}
"""Each stage's column header, from its declared label (`clean ms`, `bm25 ms`, ...)."""


def _summary_table(summary: IngestSummary, width: int) -> Table:
    """One row per file, readable at 80 columns: file, status, chunks, total ms and the
    failure code; a wide terminal also gets the action and every stage's ms. Full failure
    reasons follow the table (`_failure_lines`)."""
    wide = width >= WIDE_COLUMNS
    table = Table(title="ingest summary")
    table.add_column("file", overflow="fold", min_width=16)
    if wide:
        table.add_column("action")
    table.add_column("status")
    table.add_column("chunks", justify="right")
    if wide:
        for stage in STAGE_ORDER:
            table.add_column(STAGE_HEADERS[stage], justify="right", no_wrap=True)
    table.add_column("ms", justify="right", no_wrap=True)
    table.add_column("failure", overflow="fold")
    for outcome in summary.outcomes:
        colour = {"success": "green", "failed": "red"}.get(outcome.status, "yellow")
        cells = [outcome.source.relative_name]
        if wide:
            cells.append(outcome.action.value)
        cells += [f"[{colour}]{outcome.status}[/{colour}]", str(outcome.chunks)]
        if wide:
            cells += [str(outcome.stage_ms.get(stage, "")) for stage in STAGE_ORDER]
        total = sum(outcome.stage_ms.values())
        cells += [str(total) if outcome.stage_ms else "", _failure_code(outcome)]
        table.add_row(*cells)
    return table


def _failure_code(outcome: FileOutcome) -> str:
    return (outcome.failure_reason or "").split(":", 1)[0]


def summary_json(summary: IngestSummary) -> dict[str, object]:
    """`ragline ingest --json`: every file's outcome and the totals."""
    return {
        "files": [
            {
                "file": o.source.relative_name,
                "action": o.action.value,
                "task_id": o.task_id,
                "status": o.status,
                "chunks": o.chunks,
                "stage_ms": {stage.value: ms for stage, ms in o.stage_ms.items()},
                "failure_code": _failure_code(o) or None,
                "failure_reason": o.failure_reason,
            }
            for o in summary.outcomes
        ],
        "ingested": sum(1 for o in summary.outcomes if o.status == "success"),
        "unchanged": sum(1 for o in summary.outcomes if o.status == "skipped"),
        "failed": len(summary.failed),
        "chunks": sum(o.chunks for o in summary.outcomes),
    }


INTERRUPTED = "\ninterrupted: run `ragline ingest` again to resume\n"


def _stop_now(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: leave at once. Every run is durable at its last committed step; the next
    ingest converges the interrupted ones and retries them from their first unfinished
    stage, so draining in-flight work (a model call can take tens of seconds) buys nothing."""
    sys.stderr.write(INTERRUPTED)
    sys.stderr.flush()
    os._exit(130)


async def _ingest(
    entry: Entry,
    sources: list[SourceFile],
    user: str,
    dataset: str,
    observer: ProgressObserver,
    force: bool,
) -> IngestSummary:
    """Provision the user's embedding model, then ingest with a worker in this process
    (`ingest_workers` consumers; on a real broker, `ragline worker`s elsewhere share the
    tasks). The worker is built first: its parser sandbox starts a worker process in the
    background, which then starts beside the provisioning instead of after it."""
    worker = await entry.worker(concurrency=1)  # poll_window counts on it
    provision_embedding = await entry.use_cases.provision_embedding()
    await provision_embedding(user)
    ingest_files = await entry.use_cases.ingest_files()
    async with worker.running():
        summary: IngestSummary = await ingest_files(sources, user, dataset, observer, force=force)
        return summary


@app.command()
def ingest(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="Files or folders to ingest."),
    user: str = typer.Option("1", "--user", help="Owner (user_id) of the documents."),
    dataset: str = typer.Option("1", "--dataset", help="Dataset (dataset_id) to index into."),
    plan: str = typer.Option("default", "--plan", help="Chunk plan preset."),
    force: bool = typer.Option(False, "--force", help="Re-ingest files that did not change."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Parse, chunk and index files and folders; unchanged files are skipped."""
    entry = entry_of(ctx, data_dir, chunk_plan=plan)
    chunk_document = entry.use_cases.chunk_document()
    if plan not in chunk_document.plan_names:
        known = ", ".join(chunk_document.plan_names)
        raise typer.BadParameter(f"unknown plan {plan!r}; known: {known}", param_hint="--plan")
    try:
        sources = find_sources(paths, data_dir=lazy_entry(ctx).data_dir)
    except FileNotFoundError as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from error
    if not sources:
        console.print("nothing to ingest")
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    # a pipe or a log file gets the bars once, at the end: no refresh thread drawing unseen
    with Progress(
        *columns, console=console, transient=False, auto_refresh=console.is_terminal
    ) as progress:
        observer = ProgressObserver(progress, len(sources))
        previous = signal.signal(signal.SIGINT, _stop_now)
        try:
            summary = run_session(
                entry, lambda: _ingest(entry, sources, user, dataset, observer, force)
            )
        except ReferenceRefused as refused:  # the configured buckets name the parse cache
            console.print(f"[red]refused: {refused}[/red]")
            raise typer.Exit(2) from None
        finally:
            signal.signal(signal.SIGINT, previous)
    totals = summary_json(summary)
    if as_json:
        sys.stdout.write(json.dumps(totals, ensure_ascii=False) + "\n")
    else:
        console.print(_summary_table(summary, console.width))
        for outcome in summary.failed:
            console.print(f"[red]{outcome.source.relative_name}[/red]: {outcome.failure_reason}")
        console.print(
            f"{totals['ingested']} ingested, {totals['unchanged']} unchanged, "
            f"{totals['failed']} failed; {totals['chunks']} chunks"
        )
    if summary.failed:
        raise typer.Exit(1)
