"""`ragline models reembed status|cancel|run`: watch, stop or drive a re-embedding (issue 21).

`ragline worker` and `ragline serve` copy re-embeddings in the background; on a laptop with
neither, `ragline models reembed run` copies in the foreground until the swap (stop it with
Ctrl-C and run it again: the copy resumes, the batch in hand is copied once more). `status`
shows a progress bar (chunks done/total, rate, ETA); `--watch` follows it until it ends.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, entry_of, run_session
from ragline.adapters.inbound.cli.models import models
from ragline.adapters.inbound.entry import Entry
from ragline.application.reembedding import ReembeddingNotFound
from ragline.application.reembedding.manage import ReembeddingView, view_of
from ragline.application.secrets import masked
from ragline.domain.reembedding import IllegalReembeddingMove, Reembedding

console = Console(stderr=True)
T = TypeVar("T")
reembed = typer.Typer(
    help="Re-embeddings: a user's chunks copied into a new model's space, then swapped in.",
    no_args_is_help=True,
)
models.add_typer(reembed, name="reembed")

USER = typer.Option(None, "--user", help="Only this user's (another user's id is not found).")
WATCH_EVERY = 1.0


def view_json(view: ReembeddingView) -> dict[str, object]:
    def when(at: datetime | None) -> str | None:
        return at.isoformat() if at is not None else None

    return {
        "id": view.id,
        "user_id": view.user_id,
        "status": view.status.value,
        "done": view.done,
        "total": view.total,
        "rate_per_s": view.rate_per_s,
        "eta_s": view.eta_s,
        "source_generation": view.source_generation,
        "target_generation": view.target_generation,
        "target": {
            "provider": view.target_provider,
            "model": view.target_model,
            "dimension": view.target_dimension,
        },
        "created_at": when(view.created_at),
        "started_at": when(view.started_at),
        "ready_at": when(view.ready_at),
        "finished_at": when(view.finished_at),
        "error": view.error,
    }


def _print(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


def _session(ctx: typer.Context, data_dir: Path | None, act: Callable[[Entry], Awaitable[T]]) -> T:
    """`act` on this command's entry; a missing (or another user's) id or an ended
    re-embedding's cancel is an exit 1 with one line."""
    entry = entry_of(ctx, data_dir)
    try:
        return run_session(entry, lambda: act(entry))
    except ReembeddingNotFound as error:
        console.print(f"[red]no such re-embedding: {error}[/red]")
        raise typer.Exit(1) from None
    except IllegalReembeddingMove as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(1) from None


def _rate(view: ReembeddingView) -> str:
    rate = f"{view.rate_per_s:.1f} chunks/s" if view.rate_per_s is not None else "- chunks/s"
    eta = f"ETA {view.eta_s:.0f} s" if view.eta_s is not None else "ETA -"
    return f"{rate}  {eta}"


class Bars:
    """One rich progress bar per re-embedding, on stderr."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}

    def show(self, view: ReembeddingView) -> None:
        state, rate = view.status.value, _rate(view)
        total = max(view.total, 1) if view.total or view.ended else None
        completed = view.done if view.total else (1 if view.ended else 0)
        if view.id not in self._tasks:
            self._tasks[view.id] = self._progress.add_task(
                f"{view.id} ({view.user_id})",
                total=total,
                completed=completed,
                status=state,
                rate=rate,
            )
        else:
            self._progress.update(
                self._tasks[view.id], total=total, completed=completed, status=state, rate=rate
            )


@contextmanager
def bars() -> Iterator[Bars]:
    progress = Progress(
        TextColumn("{task.description}"),
        TextColumn("[bold]{task.fields[status]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        console=console,
        transient=False,
    )
    with progress:
        yield Bars(progress)


@reembed.command("status")
def status(
    ctx: typer.Context,
    reembedding_id: str | None = typer.Argument(None, help="Omitted: the active ones."),
    user: str | None = USER,
    watch: bool = typer.Option(False, "--watch", help="Follow it until it has ended."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a bar."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """A re-embedding's progress: chunks done/total, rate, ETA.

    Without ID: every active one (of --user)."""

    async def look(entry: Entry) -> list[ReembeddingView]:
        manage = await entry.use_cases.manage_reembeddings()
        if reembedding_id is not None:
            return [await manage.status(reembedding_id, user)]
        return await manage.active(user)

    async def act(entry: Entry) -> list[ReembeddingView]:
        views = await look(entry)
        if as_json and not watch:
            return views
        with bars() as shown:
            for view in views:
                shown.show(view)
            while watch and any(not view.ended for view in views):
                await asyncio.sleep(WATCH_EVERY)
                manage = await entry.use_cases.manage_reembeddings()
                views = [await manage.status(view.id, user) for view in views]
                for view in views:
                    shown.show(view)
        return views

    views = _session(ctx, data_dir, act)
    if as_json:
        found = [view_json(view) for view in views]
        _print(found[0] if reembedding_id is not None else found)
    elif not views:
        console.print("no active re-embedding")


@reembed.command("cancel")
def cancel(
    ctx: typer.Context,
    reembedding_id: str = typer.Argument(..., help="The re-embedding's id."),
    user: str | None = USER,
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Cancel an active re-embedding (search keeps the current model).

    The new generation's vectors are removed."""

    async def act(entry: Entry) -> ReembeddingView:
        manage = await entry.use_cases.manage_reembeddings()
        return await manage.cancel(reembedding_id, user)

    _print(view_json(_session(ctx, data_dir, act)))


@reembed.command("run")
def run(
    ctx: typer.Context,
    reembedding_id: str | None = typer.Argument(None, help="Omitted: every active one."),
    user: str | None = USER,
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Copy here, with a progress bar, until the re-embedding has ended.

    For a machine that runs no `ragline worker` or `serve`. Interrupted, it resumes when
    run again; workers running meanwhile share the copy."""

    async def act(entry: Entry) -> list[ReembeddingView]:
        loop = await entry.use_cases.reembedding_loop()
        clock_now = loop.clock.now
        with bars() as shown:

            def on_step(items: list[Reembedding]) -> None:
                for item in items:
                    shown.show(view_of(item, clock_now()))

            try:
                ended = await loop.drive(reembedding_id, user, on_step)
            except (ReembeddingNotFound, typer.Exit):
                raise
            except Exception as error:  # the store or the model: resumable, say so
                console.print(
                    f"[red]the copy stopped: {type(error).__name__}: {masked(error)}; "
                    "run it again to resume[/red]"
                )
                raise typer.Exit(1) from None
        return [view_of(item, clock_now()) for item in ended]

    views = _session(ctx, data_dir, act)
    if not views:
        console.print("no active re-embedding")
    _print([view_json(view) for view in views])
    if any(view.status.value == "FAILED" for view in views):
        raise typer.Exit(1)
