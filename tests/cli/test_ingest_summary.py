"""The ingest summary: readable in an 80-column terminal and a wide one, and as JSON."""

from __future__ import annotations

import pytest
from rich.console import Console

from ragline.adapters.inbound.cli.ingest import (
    STAGE_HEADERS,
    WIDE_COLUMNS,
    _summary_table,
    summary_json,
)
from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import FileAction, FileOutcome, IngestSummary
from ragline.domain.parse_run import STAGE_ORDER, Stage

REASON = "PARSE_ENGINE_FAILED:the PDF has no pages that could be read by any backend"


def _summary() -> IngestSummary:
    def source(name: str) -> SourceFile:
        return SourceFile(f"/docs/{name}", name, name.rsplit(".", 1)[-1], 10, "0" * 64)

    return IngestSummary(
        (
            FileOutcome(
                source("guides/a-rather-long-folder-name/tea-brewing-guide.md"),
                FileAction.NEW,
                "t-1",
                "success",
                12,
                {stage: 10 * (i + 1) for i, stage in enumerate(STAGE_ORDER)},
            ),
            FileOutcome(
                source("broken.pdf"),
                FileAction.RETRY,
                "t-2-r1",
                "failed",
                0,
                {Stage.CLEANING: 5},
                REASON,
            ),
            FileOutcome(source("same.txt"), FileAction.SKIPPED, "t-3", "skipped"),
        )
    )


def _render(width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(_summary_table(_summary(), width))
    return console.export_text()


def test_every_header_is_whole_at_80_columns() -> None:
    text = _render(80)
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "file" in line and "status" in line)
    for column in ("file", "status", "chunks", "ms", "failure"):
        assert f" {column} " in f" {header.replace('┃', ' ').replace('|', ' ')} "
    assert "…" not in text
    assert "PARSE_ENGINE_FAILED" in text
    assert "tea-brewing-guide.md" in text.replace("\n", "").replace("│", "").replace(" ", "")


@pytest.mark.parametrize("width", [WIDE_COLUMNS, 200])
def test_a_wide_terminal_also_shows_every_stage(width: int) -> None:
    text = _render(width)
    for stage in STAGE_ORDER:
        assert STAGE_HEADERS[stage] in text
    assert "…" not in text
    assert "PARSE_ENGINE_FAILED" in text
    assert max(len(line) for line in text.splitlines()) <= width


def test_the_json_summary_names_every_file_and_the_totals() -> None:
    data = summary_json(_summary())
    assert (data["ingested"], data["unchanged"], data["failed"], data["chunks"]) == (1, 1, 1, 12)
    failed = data["files"][1]
    assert failed["failure_code"] == "PARSE_ENGINE_FAILED"
    assert failed["failure_reason"] == REASON
    assert failed["stage_ms"] == {"CLEANING": 5}
    assert data["files"][0]["stage_ms"]["SPARSE_VECTORIZING"] == 60
    assert data["files"][2]["failure_code"] is None
