"""Ctrl-C (or a crash) in the middle of `ragline ingest`; running it again resumes.

The interrupted run is left PROCESSING; the next ingest delivers its task again, the pipeline
converges it to FAILED INTERRUPTED_TASK, and a retry (retry_of_task_id set) finishes it.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import EXAMPLES, Ingested
from tests.e2e.ragline_process import (
    TIMEOUT_SECONDS,
    database,
    document_id,
    finish,
    ingest_counts,
    kill_group,
    latest_runs,
    run,
    runs,
    start,
)

STAGES = (
    "cleaning",
    "chunking",
    "vectorizing",
    "pretokenize",
    "keyword_indexing",
    "sparse_vectorizing",
)
SMALL_FILES = ("taijiquan-zh.md", "tea-brewing-guide.md", "sourdough-bread.docx")
LONG_FILE = "field-journal.txt"
LONG_PARAGRAPHS = 60
_WORDS = (
    "river", "heron", "willow", "meadow", "granite", "lantern", "orchard", "harbour",
    "falcon", "thistle", "copper", "lichen", "ember", "quarry", "marsh", "juniper",
    "beacon", "saddle", "glacier", "hazel", "pebble", "cedar", "tide", "furrow",
    "sparrow", "kiln", "ridge", "hollow", "bramble", "clover", "anvil",
)  # fmt: skip


def write_long_file(path: Path) -> None:
    """Varied prose (no two paragraphs alike, so no embedding cache hit): hundreds of chunks,
    long enough that VECTORIZING is still running seconds after it started."""
    rng = random.Random(11)
    parts = []
    for number in range(LONG_PARAGRAPHS):
        if number % 10 == 0:
            parts.append(f"Day {number // 10 + 1} of the survey\n")
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
            for _ in range(rng.randint(4, 7))
        ]
        parts.append(f"Entry {number}: " + " ".join(sentences) + "\n")
    path.write_text("\n".join(parts), encoding="utf-8")


def wait_until_vectorizing(process: subprocess.Popen[str], data_dir: Path, doc: str) -> None:
    """Poll the store until the run of document `doc` is in VECTORIZING."""
    database = data_dir / "ragline.db"
    deadline = time.monotonic() + TIMEOUT_SECONDS
    query = (
        "SELECT count(*) FROM parse_run WHERE original_file_id = ? "
        "AND pipeline_status = 'PROCESSING' AND vectorizing_status = 'PROCESSING'"
    )
    while time.monotonic() < deadline:
        assert process.poll() is None, "ingest ended before it could be interrupted"
        if database.exists():
            try:
                with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
                    if db.execute(query, (doc,)).fetchone()[0] > 0:
                        return
            except sqlite3.OperationalError:
                pass  # not migrated yet, or locked by the writer for a moment
        time.sleep(0.1)
    kill_group(process)
    raise AssertionError("the long file never reached VECTORIZING in time")


def brief(rows: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            r["task_id"],
            r["pipeline_status"],
            *(r[f"{s}_status"] for s in STAGES),
            r["failure_reason"],
            r["retry_of_task_id"],
        )
        for r in rows
    ]


def chunks_by_file(data_dir: Path, docs: Path) -> dict[str, list[str]]:
    with database(data_dir) as db:
        return {
            path.name: sorted(
                row["text"]
                for row in db.execute(
                    "SELECT text FROM chunk WHERE doc_id = ?", (document_id(path),)
                )
            )
            for path in docs.iterdir()
        }


@pytest.mark.slow  # ~70 s each on the shared machine: two ingests, one cut short
@pytest.mark.parametrize("how", ["ctrl-c", "kill-9"])
def test_interrupted_ingest_resumes_and_every_file_succeeds(
    tmp_path: Path, examples_ingested: Ingested, how: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in SMALL_FILES:
        shutil.copy(EXAMPLES / name, docs / name)
    write_long_file(docs / LONG_FILE)
    data_dir = tmp_path / "data"
    process = start(data_dir, "ingest", str(docs))
    wait_until_vectorizing(process, data_dir, document_id(docs / LONG_FILE))
    if how == "ctrl-c":
        kill_group(process, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        stopped = finish(process, ["ingest", str(docs)], timeout=120)
        assert stopped.returncode == 130, stopped.explain()
        assert "ragline ingest` again to resume" in stopped.stderr.replace("\n", " ")
        assert not stopped.left_running, "a process of the interrupted ingest kept running"
    else:
        kill_group(process, signal.SIGKILL)
        process.communicate(timeout=60)

    left = latest_runs(data_dir)
    long_run = left[document_id(docs / LONG_FILE)]
    assert long_run["pipeline_status"] == "PROCESSING", brief(left.values())

    again = run(data_dir, "ingest", str(docs))
    assert again.returncode == 0, again.explain()
    counts = ingest_counts(again)
    assert counts.failed == 0
    assert counts.ingested + counts.unchanged == len(SMALL_FILES) + 1, again.explain()
    assert counts.ingested >= 1

    latest = latest_runs(data_dir)
    expected_docs = {document_id(p) for p in docs.iterdir()}
    assert set(latest) == expected_docs
    assert {r["pipeline_status"] for r in latest.values()} == {"SUCCESS"}, latest

    every = runs(data_dir)
    interrupted = [r for r in every if (r["failure_reason"] or "").startswith("INTERRUPTED_TASK")]
    assert interrupted, brief(every)
    assert long_run["task_id"] in {r["task_id"] for r in interrupted}, brief(every)
    for old in interrupted:
        assert old["pipeline_status"] == "FAILED"
        retries = [r for r in every if r["retry_of_task_id"] == old["task_id"]]
        assert len(retries) == 1, (old["task_id"], retries)
        assert retries[0]["pipeline_status"] == "SUCCESS"
        assert old["superseded_by_task_id"] == retries[0]["task_id"]
        # Resumed, not redone: every stage the interrupted run finished is inherited.
        done_before = [s for s in STAGES if old[f"{s}_status"] == "SUCCESS"]
        inherited = [s for s in STAGES if retries[0][f"{s}_inherited"]]
        assert inherited == done_before, (old, retries[0])
    assert not [r for r in every if r["pipeline_status"] in ("PENDING", "PROCESSING")]

    # Per example file, the same chunks as a clean, uninterrupted ingest: none lost or doubled.
    resumed = chunks_by_file(data_dir, docs)
    assert len(resumed.pop(LONG_FILE)) > 20
    clean = chunks_by_file(examples_ingested.data_dir, examples_ingested.docs)
    assert resumed == {name: clean[name] for name in SMALL_FILES}

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
