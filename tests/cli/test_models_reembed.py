"""`ragline models set-embedding --reembed` (issue 21): a user with vectors is refused another
model without the flag (saying to pass it); with it a re-embedding is planned, its id printed
with how to watch it, and the user's default config stays until the swap."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry


def run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_cli(_entry), [*args, "--data-dir", str(tmp_path / "data")])
    return result.exit_code, result.stdout, result.stderr if result.stderr_bytes else ""


def test_another_model_is_planned_as_a_reembedding_only_with_the_flag(
    tmp_path: Path, openai_embeddings_url: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text("# Tea\n\nGreen tea wants water at 80 degrees.\n")
    code, out, err = run(tmp_path, "ingest", str(docs), "--user", "5", "--dataset", "6")
    assert code == 0, out + err
    code, out, _ = run(tmp_path, "models", "show", "--user", "5")
    before = json.loads(out)["embedding"]
    other = [
        "models",
        "set-embedding",
        "--user",
        "5",
        "--provider",
        "openai",
        "--model",
        "multilingual-e5-small-q4",
        "--dimension",
        "384",
        "--base-url",
        openai_embeddings_url,
    ]
    code, out, err = run(tmp_path, *other)
    assert code == 1 and "--reembed" in out + err
    code, out, err = run(tmp_path, *other, "--reembed")
    assert code == 0, out + err
    planned = json.loads(out)
    assert planned["status"] == "PLANNED" and planned["reembedding_id"]
    said = " ".join(err.split())  # the console wraps long lines
    assert f"ragline models reembed status {planned['reembedding_id']}" in said
    assert f"ragline models reembed run {planned['reembedding_id']}" in said
    code, out, _ = run(tmp_path, "models", "show", "--user", "5")
    assert json.loads(out)["embedding"] == before  # the default moves only at the swap
    code, out, err = run(tmp_path, *other, "--reembed")  # one at a time
    assert code == 1 and "already re-embedding" in out + err
