"""Ctrl-C (or a crash) in the middle of `ragline ingest`; running it again resumes.

The interrupted run is left PROCESSING; the next ingest delivers its task again, the pipeline
converges it to FAILED INTERRUPTED_TASK, and a retry (retry_of_task_id set) finishes it.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import EXAMPLES, Ingested, copy_examples
from tests.e2e.ragline_process import (
    TIMEOUT_SECONDS,
    chunk_texts,
    document_id,
    finish,
    ingest_counts,
    kill_group,
    latest_runs,
    run,
    runs,
    start,
)

MID_RUN = (
    "SELECT count(*) FROM parse_run "
    "WHERE pipeline_status = 'PROCESSING' AND cleaning_status = 'SUCCESS'"
)


def wait_until_mid_run(process: subprocess.Popen[str], data_dir: Path) -> None:
    """Poll the store until some file has parsed and is still being processed."""
    database = data_dir / "ragline.db"
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "ingest ended before it could be interrupted"
        if database.exists():
            try:
                with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
                    if db.execute(MID_RUN).fetchone()[0] > 0:
                        return
            except sqlite3.OperationalError:
                pass  # not migrated yet, or locked by the writer for a moment
        time.sleep(0.1)
    kill_group(process)
    raise AssertionError("no run reached a stage after CLEANING in time")


@pytest.mark.parametrize("how", ["ctrl-c", "kill-9"])
def test_interrupted_ingest_resumes_and_every_file_succeeds(
    tmp_path: Path, examples_ingested: Ingested, how: str
) -> None:
    docs = copy_examples(tmp_path / "docs")
    data_dir = tmp_path / "data"
    process = start(data_dir, "ingest", str(docs))
    wait_until_mid_run(process, data_dir)
    if how == "ctrl-c":
        kill_group(process, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        stopped = finish(process, ["ingest", str(docs)], timeout=120)
        assert stopped.returncode == 130, stopped.explain()
        assert "ragline ingest` again to resume" in stopped.stderr.replace("\n", " ")
    else:
        kill_group(process, signal.SIGKILL)
        process.communicate(timeout=60)

    left = latest_runs(data_dir)
    unfinished = [r for r in left.values() if r["pipeline_status"] != "SUCCESS"]
    assert unfinished or len(left) < 6, "the interruption came too late to test anything"
    assert any(r["pipeline_status"] == "PROCESSING" for r in left.values()), left

    again = run(data_dir, "ingest", str(docs))
    assert again.returncode == 0, again.explain()
    counts = ingest_counts(again)
    assert counts.failed == 0
    assert counts.ingested + counts.unchanged == 6, again.explain()
    assert counts.ingested >= 1

    latest = latest_runs(data_dir)
    expected_docs = {document_id(p) for p in docs.iterdir()}
    assert set(latest) == expected_docs
    assert {r["pipeline_status"] for r in latest.values()} == {"SUCCESS"}, latest

    every = runs(data_dir)
    interrupted = [r for r in every if (r["failure_reason"] or "").startswith("INTERRUPTED_TASK")]
    assert interrupted, [(r["task_id"], r["pipeline_status"], r["failure_reason"]) for r in every]
    for old in interrupted:
        assert old["pipeline_status"] == "FAILED"
        retries = [r for r in every if r["retry_of_task_id"] == old["task_id"]]
        assert len(retries) == 1, (old["task_id"], retries)
        assert retries[0]["pipeline_status"] == "SUCCESS"
        assert old["superseded_by_task_id"] == retries[0]["task_id"]
    assert not [r for r in every if r["pipeline_status"] in ("PENDING", "PROCESSING")]

    # Same chunks as a clean, uninterrupted ingest of the same files: nothing lost or doubled.
    clean = chunk_texts(examples_ingested.data_dir)
    assert sorted(chunk_texts(data_dir)) == sorted(clean)

    if how == "ctrl-c":  # `ragline status --json` tells the same story as the store
        shown = run(data_dir, "status", "--json", "--limit", "100")
        assert shown.returncode == 0, shown.explain()
        status = {r["task_id"]: r for r in json.loads(shown.stdout)}
        for old in interrupted:
            assert status[old["task_id"]]["pipeline_status"] == "FAILED"
            assert status[old["task_id"]]["failure_reason"].startswith("INTERRUPTED_TASK")
            successor = status[old["superseded_by_task_id"]]
            assert successor["retry_of_task_id"] == old["task_id"]
            assert successor["pipeline_status"] == "SUCCESS"


def test_examples_folder_has_six_files() -> None:
    """The resume test counts on six files (several, so an interruption lands mid-run)."""
    assert len(list(EXAMPLES.iterdir())) == 6
