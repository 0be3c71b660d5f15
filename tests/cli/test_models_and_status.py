"""`ragline models ...` and `ragline status --user/--dataset` through the real wiring."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry

SECRET = "sk-cli-secret-0123456789abcdef"


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    app = build_cli(_entry)
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path / "data")], env=env)
    return result.exit_code, result.stdout + (result.stderr if result.stderr_bytes else "")


def test_models_set_show_delete_never_print_the_key(
    tmp_path: Path, openai_embeddings_url: str
) -> None:
    code, out = run(  # an endpoint that answers: the config is probed before it is stored
        tmp_path,
        "models",
        "set-embedding",
        "--user",
        "42",
        "--provider",
        "openai",
        "--model",
        "multilingual-e5-small-q4",
        "--dimension",
        "384",
        "--base-url",
        openai_embeddings_url,
        env={"RAGLINE_MODEL_API_KEY": SECRET},
    )
    assert code == 0, out
    assert json.loads(out)["api_key_set"] is True and SECRET not in out
    code, out = run(
        tmp_path, "models", "set-chat", "--user", "42", "--provider", "openai", "--model", "gpt"
    )
    assert code == 0, out
    code, out = run(tmp_path, "models", "show", "--user", "42")
    assert code == 0, out
    shown = json.loads(out)
    assert shown["embedding"]["dimension"] == 384 and shown["embedding"]["api_key_set"]
    assert shown["chat"]["model"] == "gpt" and shown["chat"]["api_key_set"] is False
    assert SECRET not in out
    code, out = run(tmp_path, "models", "delete", "--user", "42", "--kind", "chat")
    assert code == 0 and json.loads(out) == {"deleted": True}
    code, out = run(tmp_path, "models", "delete", "--user", "42", "--kind", "CHAT")
    assert code == 0 and json.loads(out) == {"deleted": False}
    code, out = run(tmp_path, "models", "show", "--user", "42")
    assert json.loads(out)["chat"] is None
    code, out = run(
        tmp_path,
        "models",
        "set-embedding",
        "--user",
        "42",
        "--provider",
        "openai",
        "--model",
        " padded",
        "--dimension",
        "8",
    )
    assert code == 1 and "model" in out


def test_status_is_scoped_by_user_and_dataset(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text("# Tea\n\nGreen tea wants water at 80 degrees.\n")
    code, out = run(tmp_path, "ingest", str(docs), "--user", "5", "--dataset", "6")
    assert code == 0, out
    code, out = run(tmp_path, "status", "--json", "--user", "5")
    assert code == 0, out
    assert len(json.loads(out)) == 1
    code, out = run(tmp_path, "status", "--json", "--user", "5", "--dataset", "7")
    assert code == 0 and json.loads(out) == []
    code, out = run(tmp_path, "status", "--json", "--user", "9")
    assert code == 0 and json.loads(out) == []
    code, out = run(tmp_path, "status", "--json")
    assert len(json.loads(out)) == 1
