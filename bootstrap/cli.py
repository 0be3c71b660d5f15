"""Console entry point: the CLI adapter, given the typed Entry of each invocation's wiring."""

from __future__ import annotations

from pathlib import Path

from ragline.adapters.inbound.entry import Entry


def _entry(data_dir: Path, /, **settings: object) -> Entry:
    from ragline.bootstrap.container import container_for
    from ragline.bootstrap.entry import entry_for

    return entry_for(container_for(data_dir, **settings))


def main() -> None:
    from ragline.adapters.inbound.cli import build_cli

    build_cli(_entry)()
