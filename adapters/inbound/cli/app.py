"""The `ragline` typer application.

Commands live one per module under this package and register themselves on `app`.
They never choose adapters: bootstrap passes a factory that, given the data dir, returns
the composition root's container (`ctx.obj.get()`); a command asks it for a use case and
calls it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from ragline.adapters.inbound.task_consumer.worker import InProcessBusOnSharedDatabase
from ragline.application.health import obtain

app = typer.Typer(
    name="ragline",
    help="Parse, chunk, index and search documents.",
    no_args_is_help=True,
    add_completion=False,
)

ContainerFactory = Callable[..., Any]
"""data_dir (and settings overrides) -> the composition root's container for this command."""
_factory: dict[str, ContainerFactory] = {}
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
    ctx.obj = LazyContainer(_factory.get("container"), data_dir)


DATA_DIR_OPTION = typer.Option(
    None,
    "--data-dir",
    help="Where embedded state lives (also accepted before the command; env RAGLINE_DATA_DIR).",
)
"""Every command takes `--data-dir` after its name too (`ragline ingest DIR --data-dir X`)."""


class LazyContainer:
    """Build the container only when a command asks for it (fast --help, fast preview)."""

    def __init__(self, factory: ContainerFactory | None, data_dir: Path) -> None:
        self._factory = factory
        self.data_dir = data_dir
        self._container: Any = None

    def choose(self, data_dir: Path | None) -> None:
        """A command's own `--data-dir` wins over the one given before the command."""
        if data_dir is not None:
            self.data_dir = data_dir

    def get(self, **settings: object) -> Any:
        """The container; `settings` override the environment's (first call only)."""
        if self._container is None:
            if self._factory is None:
                raise RuntimeError("no container factory configured (use ragline.bootstrap.cli)")
            self._container = self._factory(self.data_dir, **settings)
        return self._container


async def provided(provider: Callable[..., Any], **kwargs: Any) -> Any:
    """What a container provider gives (awaited when it opens a resource on the way)."""
    return await obtain(lambda: provider(**kwargs))


def run_session(container: Any, main: Callable[[], Awaitable[T]]) -> T:
    """Run `main` on a fresh event loop, then close every resource the container opened."""

    async def session() -> T:
        try:
            return await main()
        finally:
            closing = container.shutdown_resources()
            if inspect.isawaitable(closing):
                await closing

    try:
        return asyncio.run(session())
    except InProcessBusOnSharedDatabase as error:  # a setting to fix, not a crash
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


def build_cli(container_factory: ContainerFactory) -> typer.Typer:
    """Return the typer app with every command registered, bound to `container_factory`."""
    _factory["container"] = container_factory
    from ragline.adapters.inbound.cli import commands  # noqa: F401  (registers commands)

    return app
