"""`ragline chunks DOC_ID` through the real wiring: an ingested file's parents and children."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry

NOTES = "# Notes\n\n## Tea\n\nGreen tea at 80 degrees.\n\n## Bikes\n\nOil the chain monthly.\n"


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    app = build_cli(_entry)
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path / "data")])
    return result.exit_code, result.stdout + (result.stderr if result.stderr_bytes else "")


def test_chunks_lists_parents_with_children(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    code, out = run(tmp_path, "ingest", str(notes), "--json")
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith('{"files"'))
    task_id = json.loads(line)["files"][0]["task_id"]
    doc_id = str(int(task_id.split("-")[1], 16))  # ingest-<doc hex>-<sha256>
    code, out = run(tmp_path, "chunks", doc_id, "--json")
    assert code == 0, out
    shown = json.loads(out)
    texts = [c["text"] for f in shown["parents"] for c in f["children"]]
    assert any("80 degrees" in t for t in texts) and any("chain" in t for t in texts)
    assert all(c["enabled"] and not c["edited"] for f in shown["parents"] for c in f["children"])
    code, out = run(tmp_path, "chunks", doc_id)
    assert code == 0 and "children" in out
    code, out = run(tmp_path, "chunks", doc_id, "--user", "2")
    assert code == 1 and "no document" in out
