"""A folder of hostile files: each fails on its own with a code, the good file is searchable,
no file is lost, nothing hangs (every child has a timeout)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragline.testing.files.business_formats import recursive_eml, zip_bomb_epub, zip_bomb_xlsx
from ragline.testing.files.hostile import text_pdf, zip_bomb_docx
from tests.e2e.ragline_process import (
    Finished,
    document_id,
    ingest_counts,
    latest_runs,
    run,
    search_batch,
    summary_row,
)

GOOD = """# Lighthouse Keeping

The keeper trimmed the wick every four hours and polished the Fresnel lens at dawn, so the
beam would carry twenty nautical miles on a clear night.
"""

# file name -> failure code it must end with
HOSTILE: dict[str, str] = {
    "zip-bomb.docx": "FILE_CONTENT_INVALID",
    "binary-renamed.md": "UNSUPPORTED_FILE_TYPE",
    "invalid-utf8.md": "FILE_CONTENT_INVALID",
    "single-line.txt": "PARSE_ENGINE_FAILED",
    "single-line.md": "PARSE_ENGINE_FAILED",  # 2 MB: past the line limit, not the size
    "corrupt.pdf": "FILE_CONTENT_INVALID",
    "random-bytes.pdf": "FILE_CONTENT_INVALID",  # mislabelled: not recoverable by a retry
    "random-bytes.docx": "FILE_CONTENT_INVALID",
    "notes.xyz": "UNSUPPORTED_FILE_TYPE",
    "zip-bomb.xlsx": "FILE_CONTENT_INVALID",
    "zip-bomb.epub": "FILE_CONTENT_INVALID",
    "not-a-zip.pptx": "FILE_CONTENT_INVALID",
    "recursive.eml": "PARSE_ENGINE_FAILED",  # 50 forwards deep
}
EMPTY = "empty.md"


def write_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "good.md").write_text(GOOD, encoding="utf-8")
    (folder / "zip-bomb.docx").write_bytes(zip_bomb_docx())
    (folder / "binary-renamed.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 32)
    (folder / "invalid-utf8.md").write_bytes(b"# Title\n\nLatin-1 is not UTF-8: caf\xe9 \xff\xfe\n")
    with (folder / "single-line.txt").open("wb") as handle:  # 50 MB, no newline
        for _ in range(50):
            handle.write(b"lorem ipsum dolor sit amet " * (1024**2 // 27) + b"lorem ips")
    (folder / "single-line.md").write_bytes(b"# Title\n\n" + b"lorem ipsum " * (2 * 1024**2 // 12))
    (folder / "corrupt.pdf").write_bytes(text_pdf("This PDF is cut in half")[:200])
    (folder / "random-bytes.pdf").write_bytes(bytes(range(256)) * 16)
    (folder / "random-bytes.docx").write_bytes(bytes(range(255, -1, -1)) * 16)
    (folder / "notes.xyz").write_bytes(b"some data in a format nobody parses\n")
    (folder / "zip-bomb.xlsx").write_bytes(zip_bomb_xlsx())
    (folder / "zip-bomb.epub").write_bytes(zip_bomb_epub())
    (folder / "not-a-zip.pptx").write_bytes(b"Slides? No: plain text.\n")
    (folder / "recursive.eml").write_bytes(recursive_eml())
    (folder / EMPTY).write_bytes(b"")


@dataclass(frozen=True)
class HostileIngest:
    folder: Path
    data_dir: Path
    done: Finished
    latest: dict[str, dict[str, Any]]  # document id -> newest run

    def run_of(self, name: str) -> dict[str, Any]:
        return self.latest[document_id(self.folder / name)]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileIngest:
    root = tmp_path_factory.mktemp("e2e-hostile")
    folder = root / "hostile"
    write_folder(folder)
    assert (folder / "single-line.txt").stat().st_size >= 50 * 1024**2
    data_dir = root / "data"
    done = run(data_dir, "ingest", str(folder))
    return HostileIngest(folder, data_dir, done, latest_runs(data_dir))


def test_ingest_exits_non_zero_and_reports_every_file(hostile: HostileIngest) -> None:
    done = hostile.done
    assert done.returncode == 1, done.explain()
    counts = ingest_counts(done)
    assert counts.ingested + counts.failed == len(HOSTILE) + 2, done.explain()
    assert "success" in summary_row(done, "good.md")


def test_no_file_is_lost_every_one_has_a_terminal_run(hostile: HostileIngest) -> None:
    files = sorted(hostile.folder.iterdir())
    assert set(hostile.latest) == {document_id(p) for p in files}
    terminal = {p.name: hostile.run_of(p.name)["pipeline_status"] for p in files}
    assert set(terminal.values()) <= {"SUCCESS", "FAILED"}, terminal
    empty = hostile.run_of(EMPTY)
    if empty["pipeline_status"] == "FAILED":  # an empty file may also succeed with no chunks
        assert "failed" in summary_row(hostile.done, EMPTY)
        assert empty["failure_reason"].split(":", 1)[0].isupper(), empty


def test_each_hostile_file_fails_with_its_code(hostile: HostileIngest) -> None:
    """In the summary table and in the store: FAILED with the expected failure code."""
    verdicts = {}
    for name in HOSTILE:
        row = summary_row(hostile.done, name)
        stored = hostile.run_of(name)
        code = (stored["failure_reason"] or "").split(":", 1)[0]
        shown = "failed" if "failed" in row.split() and code and code in row else row
        verdicts[name] = (stored["pipeline_status"], code or None, shown)
    expected = {name: ("FAILED", code, "failed") for name, code in HOSTILE.items()}
    assert verdicts == expected


def test_good_file_among_hostile_ones_is_searchable(hostile: HostileIngest) -> None:
    assert hostile.run_of("good.md")["pipeline_status"] == "SUCCESS"
    answers = dict(search_batch(hostile.data_dir, [("good", "who polished the Fresnel lens")]))
    hits = answers["good"]
    assert hits and hits[0]["source"] == "good.md", hits
    assert "Fresnel" in hits[0]["text"]
    sources = {h["source"] for h in hits}
    assert sources <= {"good.md", EMPTY} | {n for n in HOSTILE if n.endswith(".md")}, hits
