"""Console entry point: wires services for the CLI adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _services(data_dir: Path) -> Any:
    from ragline.bootstrap.container import build_services

    return build_services(data_dir)


def main() -> None:
    from ragline.adapters.cli import build_cli

    build_cli(_services)()
