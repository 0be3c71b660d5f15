"""The `ragline` typer application.

Commands live one per module under this package and register themselves on `app`.
They never choose adapters: bootstrap passes a factory that, given the data dir,
returns the wired services object (`ctx.obj`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(
    name="ragline",
    help="Parse, chunk, index and search documents.",
    no_args_is_help=True,
    add_completion=False,
)

ServicesFactory = Callable[[Path], Any]
_factory: dict[str, ServicesFactory] = {}


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
    factory = _factory.get("services")
    ctx.obj = _LazyServices(factory, data_dir)


class _LazyServices:
    """Build the wired services only when a command asks for them (fast --help, fast preview)."""

    def __init__(self, factory: ServicesFactory | None, data_dir: Path) -> None:
        self._factory = factory
        self.data_dir = data_dir
        self._services: Any = None

    def get(self) -> Any:
        if self._services is None:
            if self._factory is None:
                raise RuntimeError("no services factory configured (use ragline.bootstrap.cli)")
            self._services = self._factory(self.data_dir)
        return self._services


def build_cli(services_factory: ServicesFactory) -> typer.Typer:
    """Return the typer app with every command registered, bound to `services_factory`."""
    _factory["services"] = services_factory
    from ragline.adapters.cli import commands  # noqa: F401  (registers commands)

    return app
