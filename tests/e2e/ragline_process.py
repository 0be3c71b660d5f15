"""Run the `ragline` console entry point as a child process and read what it leaves behind.

Every child starts in its own session so that a timeout (or a simulated crash) can end the
whole process group, parser sandbox workers included, and never leaves strays behind.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.application.ingest.identity import stable_int
from ragline.testing.services.ragline_cli import child_env, command

TIMEOUT_SECONDS = 300.0  # generous: the machine is slow and shared; a hang still ends
GRACE_SECONDS = 10.0  # how long helpers (parser workers) may outlive the CLI process
HIT_KEYS = {"chunk_id", "doc_id", "source", "section_path", "text", "parent_text", "score"}
_SUMMARY = re.compile(r"(\d+) ingested, (\d+) unchanged, (\d+) failed; (\d+) chunks")


@dataclass(frozen=True)
class Finished:
    """How one `ragline` process ended."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    left_running: bool = False
    """Some process of the child's group (a parser worker) outlived it by seconds."""

    def explain(self) -> str:
        return (
            f"ragline {' '.join(self.args)} -> exit {self.returncode}\n"
            f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-6000:]}"
        )


@dataclass(frozen=True)
class IngestCounts:
    """The closing line of `ragline ingest`."""

    ingested: int
    unchanged: int
    failed: int
    chunks: int


def start(
    data_dir: Path, *args: str, stdin: bool = False, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `ragline --data-dir DATA_DIR ARGS...` in a new session, cwd beside the data dir
    (so no stray `.env` from the repository is read); `env` adds settings."""
    return subprocess.Popen(
        command(data_dir, *args),
        cwd=data_dir.parent,
        env={**child_env(), **(env or {})},
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        start_new_session=True,
    )


def group_alive(process: subprocess.Popen[str]) -> bool:
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_group(process: subprocess.Popen[str], sig: int = signal.SIGKILL) -> None:
    """Signal the child's whole process group (it leads its own session)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def finish(
    process: subprocess.Popen[str],
    args: Sequence[str],
    timeout: float = TIMEOUT_SECONDS,
    stdin_text: str | None = None,
) -> Finished:
    """Wait for the child; on timeout kill its group and fail loudly (a hang is a bug)."""
    try:
        stdout, stderr = process.communicate(stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        stdout, stderr = process.communicate()
        raise AssertionError(
            f"ragline {' '.join(args)} did not finish in {timeout:.0f} s\n{stderr[-6000:]}"
        ) from None
    deadline = time.monotonic() + GRACE_SECONDS
    while group_alive(process) and time.monotonic() < deadline:
        time.sleep(0.1)
    left_running = group_alive(process)
    kill_group(process)  # parser workers orphaned by a crash, if any
    return Finished(tuple(args), process.returncode, stdout, stderr, left_running)


def run(
    data_dir: Path,
    *args: str,
    timeout: float = TIMEOUT_SECONDS,
    stdin_text: str | None = None,
    env: dict[str, str] | None = None,
) -> Finished:
    process = start(data_dir, *args, stdin=stdin_text is not None, env=env)
    return finish(process, args, timeout, stdin_text)


def ingest_counts(done: Finished) -> IngestCounts:
    found = _SUMMARY.findall(done.stderr)
    assert found, "no ingest summary line\n" + done.explain()
    ingested, unchanged, failed, chunks = (int(x) for x in found[-1])
    return IngestCounts(ingested, unchanged, failed, chunks)


def summary_row(done: Finished, file_name: str) -> str:
    """The summary table's row for `file_name` (cells joined by spaces)."""
    for line in done.stderr.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 2 and cells[1] == file_name:
            return " ".join(cells)
    raise AssertionError(f"{file_name} is not in the summary table\n" + done.explain())


def search_json(data_dir: Path, query: str, *options: str) -> list[dict[str, Any]]:
    """`ragline search QUERY --json`; checks the documented shape, returns the hits."""
    done = run(data_dir, "search", query, "--json", *options)
    assert done.returncode == 0, done.explain()
    answer = json.loads(done.stdout)
    assert set(answer) == {"hits", "degraded"}, answer
    assert answer["degraded"] == [], answer  # every embedded retriever answers
    hits: list[dict[str, Any]] = answer["hits"]
    for hit in hits:
        assert_hit_shape(hit)
    return hits


def search_batch(
    data_dir: Path, queries: Sequence[tuple[str, str]], *options: str
) -> list[tuple[str, list[dict[str, Any]]]]:
    """`ragline search --batch FILE`; returns (id, hits) per output line, in output order."""
    batch = data_dir.parent / f"queries-{time.monotonic_ns()}.jsonl"
    lines = (json.dumps({"id": i, "query": q}, ensure_ascii=False) for i, q in queries)
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run(data_dir, "search", "--batch", str(batch), *options)
    assert done.returncode == 0, done.explain()
    answers: list[tuple[str, list[dict[str, Any]]]] = []
    for line in done.stdout.splitlines():
        item = json.loads(line)
        assert set(item) == {"id", "hits", "degraded"}, item
        assert item["degraded"] == [], item
        for hit in item["hits"]:
            assert_hit_shape(hit)
        answers.append((item["id"], item["hits"]))
    return answers


def assert_hit_shape(hit: dict[str, Any]) -> None:
    assert set(hit) == HIT_KEYS, sorted(hit)
    for key in ("chunk_id", "doc_id", "source", "text"):
        assert isinstance(hit[key], str) and hit[key], (key, hit)
    assert isinstance(hit["parent_text"], str), hit
    assert isinstance(hit["section_path"], list), hit
    assert all(isinstance(part, str) for part in hit["section_path"]), hit
    assert isinstance(hit["score"], float), hit


# -- the SQLite store, read directly -----------------------------------------------------------
@contextmanager
def database(data_dir: Path) -> Iterator[sqlite3.Connection]:
    """Read-only connection to DATA_DIR/ragline.db (never writes next to the CLI)."""
    uri = f"file:{data_dir / 'ragline.db'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=10)) as connection:
        connection.row_factory = sqlite3.Row
        yield connection


def runs(data_dir: Path) -> list[dict[str, Any]]:
    with database(data_dir) as db:
        return [dict(row) for row in db.execute("SELECT * FROM parse_run ORDER BY id")]


def latest_runs(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Per document (original_file_id): the newest run of its chain (not superseded)."""
    latest: dict[str, dict[str, Any]] = {}
    for row in runs(data_dir):
        if row["superseded_by_task_id"] is None:
            previous = latest.get(row["original_file_id"])
            if previous is None or row["id"] > previous["id"]:
                latest[row["original_file_id"]] = row
    return latest


def document_id(path: Path, user_id: str = "1", dataset_id: str = "1") -> str:
    """The document id `ragline ingest` derives for a file (as stored in original_file_id)."""
    return str(stable_int("document", user_id, dataset_id, str(path.resolve())))


def chunk_texts(data_dir: Path, user_id: str = "1", dataset_id: str = "1") -> list[str]:
    with database(data_dir) as db:
        rows = db.execute(
            "SELECT text FROM chunk WHERE user_id = ? AND dataset_id = ?", (user_id, dataset_id)
        )
        return [row["text"] for row in rows]
