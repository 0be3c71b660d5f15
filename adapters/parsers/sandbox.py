"""Run parses in warm child processes bounded by memory (RLIMIT_AS) and wall-clock time.

Why a warm pool: spawning a fresh interpreter and importing pdfium/lxml/python-docx costs
hundreds of milliseconds; a kept worker answers a small file in about a millisecond more than
an in-process call, so hundreds of small files stay fast and every file is still isolated.
A worker that times out, crashes or runs out of memory is killed and replaced; the parse
becomes ParseEngineFailed with the reason, and the next file gets a fresh worker.

The address-space limit is set as the soft limit only, so the opendataloader JVM child can
lift it (a JVM cannot start under a small RLIMIT_AS; it is bounded by -Xmx instead).
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragline.application.ports.parser import (
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    UnsupportedFileType,
)

_WORKER_MODULE = "ragline.adapters.parsers.sandbox_worker"

_ERRORS: dict[str, type[ParseError]] = {
    "unsupported": UnsupportedFileType,
    "no_text": NoTextLayer,
    "engine": ParseEngineFailed,
}


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    conn: multiprocessing.connection.Connection
    memory_limit: int
    parses: int = 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace: float = 1.0) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()
            return
        self.conn.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.conn.close()

    def exitcode(self) -> int | None:
        try:
            return self.process.wait(5)
        except subprocess.TimeoutExpired:
            return None


def _death_reason(exitcode: int | None, memory_limit: int) -> str:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        if -exitcode == signal.SIGKILL:
            return f"parser process killed ({name}; out of memory?)"
        return f"parser process crashed ({name})"
    if exitcode is not None and exitcode != 0:
        return f"parser process exited with code {exitcode}"
    return f"parser process ended without answering (memory limit {memory_limit // 1024**2} MiB)"


class SandboxedParser:
    """The Parser port for untrusted files: each parse runs in a bounded worker process.

    max_workers: concurrent parses (each worker is one process). max_parses_per_worker:
    recycle workers now and then so leaks in native libraries cannot accumulate.
    """

    def __init__(
        self,
        max_workers: int = 1,
        max_parses_per_worker: int = 500,
        start_timeout: float = 60.0,
        grace_seconds: float = 5.0,
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self._max_workers = max_workers
        self._max_parses = max_parses_per_worker
        self._start_timeout = start_timeout
        self._grace = grace_seconds
        self._idle: list[_Worker] = []
        self._busy = 0
        self._lock = threading.Condition()
        self._closed = False

    # -- pool -----------------------------------------------------------------------------
    def _spawn(self, memory_limit: int) -> _Worker:
        # A fresh interpreter via `python -m` (not multiprocessing spawn, which re-imports the
        # caller's __main__); requests and replies travel pickled over a socket pair.
        parent_sock, child_sock = socket.socketpair()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", _WORKER_MODULE, str(child_sock.fileno()), str(memory_limit)],
                pass_fds=(child_sock.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal is the parent's to handle
            )
        finally:
            child_sock.close()
        parent = multiprocessing.connection.Connection(parent_sock.detach())
        worker = _Worker(process, parent, memory_limit)
        if not parent.poll(self._start_timeout):
            worker.kill()
            raise ParseEngineFailed("parser worker did not start in time")
        try:
            parent.recv()
        except (EOFError, OSError):
            worker.kill()
            raise ParseEngineFailed(
                "parser worker failed to start: " + _death_reason(worker.exitcode(), memory_limit)
            ) from None
        return worker

    def _acquire(self, memory_limit: int) -> _Worker:
        with self._lock:
            while True:
                if self._closed:
                    raise ParseEngineFailed("parser sandbox is closed")
                for worker in [w for w in self._idle if not w.alive()]:
                    self._idle.remove(worker)  # died while idle (killed, OOM-killed): replace
                    worker.kill()
                for worker in self._idle:
                    if worker.memory_limit == memory_limit:
                        self._idle.remove(worker)
                        self._busy += 1
                        return worker
                if self._idle and self._busy + len(self._idle) >= self._max_workers:
                    self._idle.pop(0).stop()  # limit changed: replace an idle worker
                if self._busy + len(self._idle) < self._max_workers:
                    self._busy += 1
                    break
                self._lock.wait()
        try:
            return self._spawn(memory_limit)
        except BaseException:
            with self._lock:
                self._busy -= 1
                self._lock.notify()
            raise

    def _release(self, worker: _Worker | None) -> None:
        with self._lock:
            self._busy -= 1
            if worker is not None and not self._closed:
                self._idle.append(worker)
            elif worker is not None:
                worker.stop()
            self._lock.notify()

    def prestart(self, options: ParseOptions | None = None) -> None:
        """Start one worker now, so the first parse does not pay the interpreter start-up."""
        limit = (options or ParseOptions()).limits.max_memory_bytes
        self._release(self._acquire(limit))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for worker in idle:
            worker.stop()

    def __enter__(self) -> SandboxedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the port -------------------------------------------------------------------------
    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        limits = options.limits
        worker = self._acquire(limits.max_memory_bytes)
        keep: _Worker | None = None
        try:
            reply = self._exchange(worker, (str(source), file_type, options), limits.max_seconds)
            worker.parses += 1
            if worker.alive() and worker.parses < self._max_parses:
                keep = worker
            else:
                worker.stop()
        finally:
            self._release(keep)
        kind = reply[0]
        if kind == "ok":
            _, markdown, title, page_count, warnings, backend, pages, images = reply
            return ParsedDocument(
                markdown, title, page_count, list(warnings), backend, pages, dict(images)
            )
        raise _ERRORS[kind](reply[1])

    def _exchange(self, worker: _Worker, request: object, max_seconds: float) -> tuple[Any, ...]:
        started = time.monotonic()
        try:
            worker.conn.send(request)
            if not worker.conn.poll(max_seconds + self._grace):
                worker.kill()
                raise ParseEngineFailed(f"parse timed out after {max_seconds:g}s")
            reply: tuple[Any, ...] = worker.conn.recv()
        except (EOFError, OSError):
            reason = _death_reason(worker.exitcode(), worker.memory_limit)
            worker.kill()
            raise ParseEngineFailed(f"{reason} after {time.monotonic() - started:.1f}s") from None
        except ParseEngineFailed:
            raise
        except BaseException:
            worker.kill()  # e.g. Ctrl-C mid-parse: never reuse a worker in an unknown state
            raise
        return reply
