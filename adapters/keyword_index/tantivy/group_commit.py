"""Group commit for a single-writer engine whose commit is expensive (fsyncs, thread
hand-offs: ~10-15 ms of CPU per Tantivy commit however few documents it carries).

Each caller hands in a change (a function applied to the writer). Changes queued while a
commit is running are applied together and share the next commit, so N concurrent callers
pay for about two commits instead of N. A caller returns only once its change is committed.
Each change stays all-or-nothing: if one change fails while being applied, everything
uncommitted is rolled back, that change fails alone, and the others are applied again.

Waiting for company. Callers that come one after another (a few files in flight, each
committing once) would each pay a commit of their own. So before committing (never for a
group that changed nothing) the committing caller waits, up to `window_seconds` (25 ms),
for as many callers as were recently seen inside `submit` at once, and commits as soon as
they are all in. A lone caller (one consumer, a single file) never waits; two files in
flight fall into step and share every commit. The expectation is the highest number of
callers seen inside at once during the last `RECENT_COMMITS` commits.

Deferred changes. `defer` queues a change nobody waits for (a delete of entries nothing can
show any more): it rides in the next group's commit, and if no caller comes within
`defer_seconds` (2 s) a timer commits it alone; `close` commits what is still queued. A
deferred change that fails is logged and dropped: it is applied in a group like any other,
so its failure rolls back only itself.

Plain threads and locks (no asyncio objects), so any event loop or thread may call it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

Change = Callable[[Any], bool]  # applies itself to the writer; True if it changed anything
RECENT_COMMITS = 8  # commits over which concurrent callers are remembered
log = logging.getLogger(__name__)


class GroupCommitter:
    def __init__(
        self,
        open_writer: Callable[[], Any],
        after_commit: Callable[[], None],
        wrap_error: Callable[[Exception], Exception],
        window_seconds: float = 0.025,
        defer_seconds: float = 2.0,
    ) -> None:
        self._open_writer = open_writer
        self._after_commit = after_commit
        self._wrap_error = wrap_error
        self._window = window_seconds
        self._defer_seconds = defer_seconds
        self._flush_timer: threading.Timer | None = None
        self._queue: list[tuple[Change, Future[None]]] = []
        self._queue_lock = threading.Lock()
        self._arrived = threading.Condition(self._queue_lock)
        self._writer_lock = threading.Lock()
        self._writer: Any = None
        self._closed = False
        self._inside = 0  # callers inside submit() now
        self._peak = 0  # most callers inside at once since the last commit
        self._recent_peaks: deque[int] = deque(maxlen=RECENT_COMMITS)

    def open_writer(self) -> Any:
        """The writer if this committer has opened it and is not closed, else None."""
        return None if self._closed else self._writer

    def submit(self, change: Change) -> None:
        """Apply and commit `change` (blocking); raises the change's own error."""
        done: Future[None] = Future()
        with self._queue_lock:
            self._queue.append((change, done))
            self._inside += 1
            self._peak = max(self._peak, self._inside)
            self._arrived.notify_all()
        try:
            with self._writer_lock:
                if not done.done():  # else an earlier group already committed it
                    with self._queue_lock:
                        group, self._queue = self._queue, []
                    self._commit_group(group)
        finally:
            with self._queue_lock:
                self._inside -= 1
        done.result()

    def defer(self, change: Change) -> None:
        """Queue `change` for the next commit, without waiting for it (see the module)."""
        done: Future[None] = Future()
        done.add_done_callback(_log_failure)
        with self._queue_lock:
            if self._closed:
                raise RuntimeError("index is closed")
            self._queue.append((change, done))
            if self._flush_timer is None:
                self._flush_timer = threading.Timer(self._defer_seconds, self.flush)
                self._flush_timer.daemon = True
                self._flush_timer.start()

    def flush(self) -> None:
        """Commit whatever is queued now (the deferred changes' timer, and `close`)."""
        with self._writer_lock:
            with self._queue_lock:
                group, self._queue = self._queue, []
                timer, self._flush_timer = self._flush_timer, None
            if timer is not None:
                timer.cancel()
            if not self._closed:
                self._commit_group(group)

    def close(self) -> Any:
        """Commit what is queued, stop accepting changes; return the writer (or None) for
        the caller to release."""
        self.flush()
        with self._writer_lock:
            self._closed = True
            writer, self._writer = self._writer, None
            return writer

    def _company(self, have: int) -> list[tuple[Change, Future[None]]]:
        """Wait (up to the window) until `have` plus the queue reaches the expected number
        of callers; take what queued meanwhile. Called with the writer lock held."""
        with self._queue_lock:
            expected = max(self._recent_peaks, default=1)
            if have < expected and self._window > 0:
                deadline = time.monotonic() + self._window
                while have + len(self._queue) < expected:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._arrived.wait(remaining)
            late, self._queue = self._queue, []
            return late

    def _committed(self) -> None:
        with self._queue_lock:
            self._recent_peaks.append(self._peak)
            self._peak = self._inside
            if not self._queue and self._flush_timer is not None:
                self._flush_timer.cancel()  # the deferred changes rode in this commit
                self._flush_timer = None

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
        changed, waited, start = False, False, 0
        while True:
            for position in range(start, len(group)):
                change, done = group[position]
                try:
                    changed = change(writer) or changed
                except Exception as exc:
                    writer.rollback()
                    done.set_exception(self._wrap_error(exc))
                    self._commit_group(group[:position] + group[position + 1 :])
                    return
            if not changed or waited:
                break
            waited = True
            late = self._company(len(group))
            if not late:
                break
            start, group = len(group), group + late
        try:
            if changed:
                writer.commit()
                self._after_commit()
                self._committed()
        except Exception as exc:
            writer.rollback()
            for _, done in group:
                done.set_exception(self._wrap_error(exc))
            return
        for _, done in group:
            done.set_result(None)


def _log_failure(done: Future[None]) -> None:
    error = done.exception()
    if error is not None:
        log.warning("a deferred index change failed and was dropped: %s", error)
