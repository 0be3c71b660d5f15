"""GroupCommitter: concurrent changes share commits, a failing change fails alone."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from ragline.adapters.keyword_index.tantivy.group_commit import GroupCommitter


class RecordingWriter:
    """A writer that keeps uncommitted and committed changes apart, like an index writer."""

    def __init__(self, commit_seconds: float = 0.0) -> None:
        self.pending: list[str] = []
        self.committed: list[str] = []
        self.commits = 0
        self.rollbacks = 0
        self.commit_seconds = commit_seconds

    def commit(self) -> None:
        time.sleep(self.commit_seconds)
        self.committed.extend(self.pending)
        self.pending.clear()
        self.commits += 1

    def rollback(self) -> None:
        self.pending.clear()
        self.rollbacks += 1


def committer_for(writer: RecordingWriter) -> GroupCommitter:
    return GroupCommitter(lambda: writer, lambda: None, lambda exc: ValueError(str(exc)))


def add(name: str) -> Any:
    def change(writer: RecordingWriter) -> bool:
        writer.pending.append(name)
        return True

    return change


def test_concurrent_changes_share_commits() -> None:
    """The first commit is held until every other caller has queued behind it (seen in the
    committer's queue, not guessed by a sleep); they then share one commit."""
    writer = RecordingWriter()
    committer = committer_for(writer)
    start = threading.Barrier(12)
    first_commit = writer.commit

    def commit_once_the_rest_queued() -> None:
        if writer.commits == 0:
            for _ in range(10_000):
                with committer._queue_lock:
                    if len(committer._queue) + len(writer.pending) == 12:
                        break
                threading.Event().wait(0.001)
            else:
                raise AssertionError("the other callers never queued")
        first_commit()

    writer.commit = commit_once_the_rest_queued  # type: ignore[method-assign]

    def submit(n: int) -> None:
        start.wait()
        committer.submit(add(f"c{n}"))
        assert f"c{n}" in writer.committed  # committed before submit returned

    with ThreadPoolExecutor(12) as pool:
        list(pool.map(submit, range(12)))
    assert sorted(writer.committed) == sorted(f"c{n}" for n in range(12))
    assert writer.commits == 2  # the first group's, then one for all queued meanwhile


def test_a_failing_change_fails_alone() -> None:
    writer = RecordingWriter()
    committer = committer_for(writer)

    def broken(w: RecordingWriter) -> bool:
        w.pending.append("half")
        raise RuntimeError("boom")

    group: list[tuple[Any, Future[None]]] = [
        (change, Future()) for change in (add("a"), broken, add("b"))
    ]
    committer._commit_group(group)
    assert writer.committed == ["a", "b"]
    assert writer.rollbacks == 1
    with pytest.raises(ValueError, match="boom"):
        group[1][1].result()
    assert group[0][1].result() is None
    assert group[2][1].result() is None


def test_changes_that_change_nothing_do_not_commit() -> None:
    writer = RecordingWriter()
    committer = committer_for(writer)
    committer.submit(lambda w: False)
    assert writer.commits == 0


def test_a_failed_commit_fails_the_whole_group() -> None:
    writer = RecordingWriter()

    def failing_commit() -> None:
        raise OSError("disk full")

    writer.commit = failing_commit  # type: ignore[method-assign]
    committer = committer_for(writer)
    with pytest.raises(ValueError, match="disk full"):
        committer.submit(add("a"))
    assert writer.rollbacks == 1
    assert writer.pending == []


def test_closed_committer_refuses_changes() -> None:
    writer = RecordingWriter()
    committer = committer_for(writer)
    committer.submit(add("a"))
    assert committer.close() is writer
    with pytest.raises(RuntimeError):
        committer.submit(add("b"))


def test_a_lone_caller_commits_each_change_without_company() -> None:
    """Callers one after another: every change is committed before its submit returns, one
    commit each (nobody to wait for)."""
    writer = RecordingWriter()
    committer = committer_for(writer)
    for n in range(5):
        committer.submit(add(f"c{n}"))
        assert writer.committed[-1] == f"c{n}"
    assert writer.commits == 5
