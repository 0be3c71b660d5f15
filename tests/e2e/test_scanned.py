"""A scanned two-page PDF (a Chinese page, an English page; images only, no text layer) and a
scanned PNG: `ragline ingest` (backend auto, the quality tier) OCRs them and `ragline search`
finds them by their text; at the basic tier (RAGLINE_PDF_BACKEND=naive) the PDF fails with
NO_TEXT_LAYER instead of indexing nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ragline.testing.files.scanned import make_scanned_pdf
from tests.e2e.ragline_process import ingest_counts, run, search_json, summary_row

SCANS = Path(__file__).resolve().parents[2] / "examples" / "scans"
"""The checked-in scan samples (made by testing/files/scanned.py); kept out of
examples/docs so the README's first command needs no OCR engine."""


def _status(data_dir: Path) -> list[dict[str, object]]:
    done = run(data_dir, "status", "--json")
    assert done.returncode == 0, done.explain()
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_scans_are_ocred_at_the_quality_tier_and_found_by_search(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(SCANS, docs)
    data_dir = tmp_path / "data"
    first = run(data_dir, "ingest", str(docs))
    assert first.returncode == 0, first.explain()
    counts = ingest_counts(first)
    assert (counts.ingested, counts.failed) == (2, 0), first.explain()
    assert "success" in summary_row(first, "glacier-and-lighthouse-scan.pdf")

    zh = search_json(data_dir, "青藏高原冰川消融", "--top-k", "3")
    assert zh and zh[0]["source"] == "glacier-and-lighthouse-scan.pdf", zh
    assert "冰川" in zh[0]["text"]
    en = search_json(data_dir, "whale oil lighthouse beacon", "--top-k", "5")
    assert any(h["source"] == "glacier-and-lighthouse-scan.pdf" for h in en), en
    assert any("whale oil" in h["text"] for h in en), en

    backends = {row["parse_backend"] for row in _status(data_dir)}
    assert backends == {"naive+tesseract", "tesseract"}
    pdf_row = next(r for r in _status(data_dir) if r["parse_backend"] == "naive+tesseract")
    warnings = pdf_row["parse_warnings"]
    assert isinstance(warnings, list) and "OCR: 2 of 2 pages" in warnings


def test_a_scan_fails_clearly_at_the_basic_tier(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_scanned_pdf(docs / "scan.pdf")
    (tmp_path / ".env").write_text("RAGLINE_PDF_BACKEND=naive\n", encoding="utf-8")
    data_dir = tmp_path / "data"  # the CLI runs beside it and reads that .env
    done = run(data_dir, "ingest", str(docs))
    counts = ingest_counts(done)
    assert (counts.ingested, counts.failed) == (0, 1), done.explain()
    (row,) = _status(data_dir)
    assert row["pipeline_status"] == "FAILED" and row["failed_stage"] == "CLEANING"
    reason = str(row["failure_reason"])
    assert reason.startswith("NO_TEXT_LAYER:") and "quality tier" in reason, reason
