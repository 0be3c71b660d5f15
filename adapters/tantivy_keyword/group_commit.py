"""Group commit for a single-writer engine whose commit is expensive (fsyncs).

Each caller hands in a change (a function applied to the writer). Changes queued while a
commit is running are applied together and share the next commit, so N concurrent callers
pay for about two commits instead of N. The committing caller first waits `window_seconds`
(5 ms, a few percent of a commit) so that callers just released can join its group.
A caller returns only once its change is committed. Each change stays all-or-nothing: if one
change fails while being applied, everything uncommitted is rolled back, that change fails
alone, and the others are applied again. Plain threads and locks (no asyncio objects), so
any event loop or thread may call it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

Change = Callable[[Any], bool]  # applies itself to the writer; True if it changed anything


class GroupCommitter:
    def __init__(
        self,
        open_writer: Callable[[], Any],
        after_commit: Callable[[], None],
        wrap_error: Callable[[Exception], Exception],
        window_seconds: float = 0.005,
    ) -> None:
        self._open_writer = open_writer
        self._after_commit = after_commit
        self._wrap_error = wrap_error
        self._window = window_seconds
        self._queue: list[tuple[Change, Future[None]]] = []
        self._queue_lock = threading.Lock()
        self._writer_lock = threading.Lock()
        self._writer: Any = None
        self._closed = False

    def submit(self, change: Change) -> None:
        """Apply and commit `change` (blocking); raises the change's own error."""
        done: Future[None] = Future()
        with self._queue_lock:
            self._queue.append((change, done))
        with self._writer_lock:
            if not done.done():  # else an earlier group already committed it
                # A short wait lets callers released by the previous commit join this group.
                time.sleep(self._window)
                with self._queue_lock:
                    group, self._queue = self._queue, []
                self._commit_group(group)
        done.result()

    def close(self) -> Any:
        """Stop accepting changes; return the writer (or None) for the caller to release."""
        with self._writer_lock:
            self._closed = True
            writer, self._writer = self._writer, None
            return writer

    def _commit_group(self, group: list[tuple[Change, Future[None]]]) -> None:
        if not group:
            return
        try:
            if self._closed:
                raise RuntimeError("index is closed")
            if self._writer is None:
                self._writer = self._open_writer()
        except Exception as exc:
            for _, done in group:
                done.set_exception(exc)
            return
        writer = self._writer
        changed = False
        for position, (change, done) in enumerate(group):
            try:
                changed = change(writer) or changed
            except Exception as exc:
                writer.rollback()
                done.set_exception(self._wrap_error(exc))
                self._commit_group(group[:position] + group[position + 1 :])
                return
        try:
            if changed:
                writer.commit()
                self._after_commit()
        except Exception as exc:
            writer.rollback()
            for _, done in group:
                done.set_exception(self._wrap_error(exc))
            return
        for _, done in group:
            done.set_result(None)
