"""`ragline tasks redrive` (issue 19): on embedded defaults the in-process bus holds no dead
letter of another process, so there is nothing to redrive, said in JSON for pipes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry


def test_tasks_redrive_reports_what_it_published_again(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_cli(_entry),
        ["tasks", "redrive", "--json", "--data-dir", str(tmp_path / "data")],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"redriven": []}
