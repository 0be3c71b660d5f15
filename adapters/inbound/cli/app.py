"""The `ragline` typer application.

Commands live one per module under this package and register themselves on `app`.
They never choose adapters: bootstrap passes a factory that, given the data dir, returns
the typed `Entry` of the composition root (`entry_of(ctx, data_dir)`); a command takes a use
case from `entry.use_cases` and calls it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, Protocol, TypeVar

import typer

from ragline.adapters.inbound.entry import Entry
from ragline.application.ports.misconfiguration import Misconfiguration

app = typer.Typer(
    name="ragline",
    help="Parse, chunk, index and search documents.",
    no_args_is_help=True,
    add_completion=False,
)


class EntryFactory(Protocol):
    """data_dir (and settings overrides) -> the entry of this command's wiring."""

    def __call__(self, data_dir: Path, /, **settings: object) -> Entry: ...


_factory: dict[str, EntryFactory] = {}
T = TypeVar("T")


@app.callback()
def _root(
    ctx: typer.Context,
    data_dir: Path = typer.Option(
        Path(".ragline"),
        "--data-dir",
        envvar="RAGLINE_DATA_DIR",
        help="Where embedded state lives (database, objects, indexes).",
    ),
) -> None:
    ctx.obj = LazyEntry(_factory.get("entry"), data_dir)


DATA_DIR_OPTION = typer.Option(
    None,
    "--data-dir",
    help="Where embedded state lives (also accepted before the command; env RAGLINE_DATA_DIR).",
)
"""Every command takes `--data-dir` after its name too (`ragline ingest DIR --data-dir X`)."""


class LazyEntry:
    """Build the wiring only when a command asks for it (fast --help, fast preview)."""

    def __init__(self, factory: EntryFactory | None, data_dir: Path) -> None:
        self._factory = factory
        self.data_dir = data_dir
        self._entry: Entry | None = None

    def choose(self, data_dir: Path | None) -> None:
        """A command's own `--data-dir` wins over the one given before the command."""
        if data_dir is not None:
            self.data_dir = data_dir

    def get(self, **settings: object) -> Entry:
        """The entry; `settings` override the environment's (first call only)."""
        if self._entry is None:
            if self._factory is None:
                raise RuntimeError("no entry factory configured (use ragline.bootstrap.cli)")
            try:
                self._entry = self._factory(self.data_dir, **settings)
            except Misconfiguration as error:
                refuse(error)
        return self._entry


def lazy_entry(ctx: typer.Context) -> LazyEntry:
    """The root callback's LazyEntry (typer types `ctx.obj` as anything)."""
    found = ctx.obj
    if not isinstance(found, LazyEntry):
        raise RuntimeError("ragline's root callback did not run (use build_cli)")
    return found


def entry_of(ctx: typer.Context, data_dir: Path | None, **settings: object) -> Entry:
    """This command's entry: its own `--data-dir` chosen, `settings` overriding the env's."""
    lazy = lazy_entry(ctx)
    lazy.choose(data_dir)
    return lazy.get(**settings)


def run_session(entry: Entry, main: Callable[[], Awaitable[T]]) -> T:
    """Run `main` on a fresh event loop, then close every resource the wiring opened."""

    async def session() -> T:
        try:
            return await main()
        finally:
            await entry.close()

    try:
        return asyncio.run(session())
    except Misconfiguration as error:
        refuse(error)


def refuse(error: Misconfiguration) -> NoReturn:
    """A setting to fix, not a crash: one line (the kind, as a traceback's last line would
    name it, and what to set), exit 2."""
    typer.echo(f"error: {type(error).__name__}: {error}", err=True)
    raise typer.Exit(2) from None


def build_cli(entry_factory: EntryFactory) -> typer.Typer:
    """Return the typer app with every command registered, bound to `entry_factory`."""
    _factory["entry"] = entry_factory
    from ragline.adapters.inbound.cli import commands  # noqa: F401  (registers commands)

    return app
