"""The CLI is the operator: its commands go through the same reference rule as the service
(docs/security.md). `ragline ingest` configured to write Markdown into the parse cache's area
is refused before anything is uploaded."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry


def test_an_ingest_whose_markdown_bucket_is_the_parse_cache_uploads_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("Green tea wants water at 80 degrees.")
    data = tmp_path / "data"
    env = {
        "RAGLINE_MARKDOWN_BUCKET": "parse-cache",
        "RAGLINE_PARSE_CACHE_BUCKET": "parse-cache",
        "RAGLINE_PARSE_CACHE_PREFIX": "",
    }
    result = CliRunner().invoke(
        build_cli(_entry),
        ["ingest", str(tmp_path / "notes.txt"), "--data-dir", str(data)],
        env=env,
    )
    assert result.exit_code == 2, result.output
    assert "md: names an area only ragline writes (the parse cache)" in result.output
    uploaded = [p for p in data.rglob("notes.txt") if p.is_file()]
    assert uploaded == []
