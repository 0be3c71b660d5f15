"""Console entry point: the CLI adapter, given the container of each invocation."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _container(data_dir: Path, **settings: object) -> Any:
    from ragline.bootstrap.container import container_for

    return container_for(data_dir, **settings)


def main() -> None:
    from ragline.adapters.inbound.cli import build_cli

    build_cli(_container)()
