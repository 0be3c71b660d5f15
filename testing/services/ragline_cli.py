"""The `ragline` console entry point as a child process's command line, with a clean
environment: what the end-to-end tests and the campaigns start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENTRY = "from ragline.bootstrap.cli import main; main()"


def command(data_dir: Path, *args: str) -> list[str]:
    """`ragline --data-dir DATA_DIR ARGS...` run by this interpreter."""
    return [sys.executable, "-c", ENTRY, "--data-dir", str(data_dir), *args]


def child_env() -> dict[str, str]:
    """The caller's environment without RAGLINE_* settings, and a wide terminal for tables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLINE_")}
    env.update({"COLUMNS": "1000", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"})
    return env
