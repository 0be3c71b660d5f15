"""Run parses in warm child processes bounded by memory (RLIMIT_AS) and wall-clock time.

Why a warm pool: spawning a fresh interpreter and importing pdfium/lxml/python-docx costs
hundreds of milliseconds; a kept worker answers a small file in about a millisecond more than
an in-process call, so hundreds of small files stay fast and every file is still isolated.
A worker that times out, crashes or runs out of memory is killed and replaced; the parse
becomes ParseEngineFailed with the reason, and the next file gets a fresh worker.

The address-space limit is set as the soft limit only, so the opendataloader JVM child can
lift it (a JVM cannot start under a small RLIMIT_AS; it is bounded by -Xmx instead).

Containment, not only bounds (issue 12): a worker gets a scrubbed environment (an allow-list:
no RAGLINE_* settings, API keys or passwords), talks JSON (sandbox_wire; a subverted parser
cannot make the parent unpickle code), leads its own process group, which is killed whole on
timeout, crash or recycling (a JVM grandchild goes with it), runs in a neutral working
folder, and cannot read the `hidden` files (the data dir's secret key; Landlock).

The document's text comes back through a file, not the reply (issue 24): the worker writes it
into a private folder of this pool (under `text_dir`), at a name the parent picked, and the
parent reads it once and deletes it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing.connection
import os
import shutil
import signal
import socket
import subprocess  # starts the worker  # nosec B404
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from ragline.adapters.parser.builtin.landlock import readable_entries
from ragline.adapters.parser.builtin.sandbox_wire import (
    decode_message,
    decode_reply,
    decode_reply_sizes,
    encode_control,
    encode_request,
)
from ragline.application.ports.parser import (
    ParsedDocument,
    ParsedText,
    ParseEngineFailed,
    ParseOptions,
)

_WORKER_MODULE = "ragline.adapters.parser.builtin.sandbox_worker"
_log = logging.getLogger(__name__)

SAFE_ENV_NAMES = frozenset(
    {
        *("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP"),
        *("JAVA_HOME", "PYTHONPATH", "OMP_NUM_THREADS"),
        *("XDG_CACHE_HOME", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"),  # local models
    }
)
"""What a parser may see of the parent's environment (plus LC_*): locale, temp dir, where
Java and local model caches live. Everything else (RAGLINE_*, *_API_KEY, HF_TOKEN,
passwords, tokens, URLs with credentials) is dropped."""


def scrubbed_environment(
    environ: Mapping[str, str], extra_names: Iterable[str] = ()
) -> dict[str, str]:
    """The environment a worker starts with: the allow-listed names only."""
    allowed = SAFE_ENV_NAMES | frozenset(extra_names)
    env = {k: v for k, v in environ.items() if k in allowed or k.startswith("LC_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker's whole process group (it leads one: start_new_session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    conn: multiprocessing.connection.Connection
    memory_limit: int
    parses: int = 0
    unrestricted: str | None = None
    """Why file reads are not restricted in this worker (None: they are, or nothing to hide)."""

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace: float = 1.0) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send_bytes(encode_control("stop"))
        if not self._exited_unreaped(grace):
            self.kill()
            return
        _kill_group(self.process)  # what it started and left behind; its pid is still held
        self.process.wait()
        self.conn.close()

    def kill(self) -> None:
        _kill_group(self.process)  # before reaping the leader, so the group id is still ours
        self.process.kill()
        self.process.wait()
        self.conn.close()

    def _exited_unreaped(self, timeout: float) -> bool:
        """Wait for the worker to exit but leave it a zombie (WNOWAIT): until it is reaped
        its pid, and so its process group id, cannot be reused by another process."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            except ChildProcessError:
                return True  # already reaped (poll() found it dead)
            if found is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

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
        hidden: Iterable[Path] = (),
        readable: Iterable[Path] = (),
        extra_env_names: Iterable[str] = (),
        formats: str | None = None,
        text_dir: Path | None = None,
        prestart_memory_bytes: int | None = None,
    ) -> None:
        """hidden: files a parser must not read (the secret key, a .env). readable: folders
        it must read even if created after the worker starts beside a hidden file (the temp
        dir). extra_env_names: environment variables a parser needs beyond SAFE_ENV_NAMES.
        formats: `module:attribute` of a file-type -> parser mapping for the worker's registry
        (tests); None: the registry's own, every format with OCR bound. text_dir: where the
        pool's private folder for parsed text is made (the workspace; None: the system's
        temp dir); it is removed on close. prestart_memory_bytes: start one worker with this
        memory limit (the pipeline's) on a background thread now, so the worker's interpreter
        start-up (~0.3 s) runs beside the caller's own start-up instead of in front of the
        first parse, which waits for that worker as for any busy one."""
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
        self._hidden = tuple(hidden)
        self._readable = tuple(readable)
        self._extra_env = tuple(extra_env_names)
        self._formats = formats
        # absolute: the worker runs in another working directory, so a relative folder (the
        # default data dir is `./.ragline`) would name a different place there
        self._text_dir = text_dir.resolve() if text_dir is not None else None
        self._texts: Path | None = None
        self._text_names = itertools.count()
        if prestart_memory_bytes is not None:
            threading.Thread(
                target=self._prestart_quietly,
                args=(prestart_memory_bytes,),
                name="parser-prestart",
                daemon=True,
            ).start()

    def _text_file(self) -> Path:
        """A new name in the pool's private folder (made on first use, mode 0700)."""
        with self._lock:
            if self._texts is None or not self._texts.is_dir():
                if self._text_dir is not None:
                    self._text_dir.mkdir(parents=True, exist_ok=True)
                self._texts = Path(tempfile.mkdtemp(prefix="parsed-", dir=self._text_dir)).resolve()
                # a pool never closed (a process-wide singleton) still leaves no folder behind
                weakref.finalize(self, shutil.rmtree, self._texts, ignore_errors=True)
            return self._texts / f"{next(self._text_names)}.txt"

    # -- pool -----------------------------------------------------------------------------
    def _worker_environment(self) -> dict[str, str]:
        env = scrubbed_environment(os.environ, self._extra_env)
        if self._readable:  # scratch files (opendataloader's) must stay readable to the worker
            env["TMPDIR"] = str(self._readable[0])
            env.pop("TEMP", None)
            env.pop("TMP", None)
        return env

    def _spawn(self, memory_limit: int) -> _Worker:
        # A fresh interpreter via `python -m` (not multiprocessing spawn, which re-imports the
        # caller's __main__); requests and replies travel as JSON over a socket pair.
        parent_sock, child_sock = socket.socketpair()
        for folder in self._readable:
            folder.mkdir(parents=True, exist_ok=True)
        try:
            process = subprocess.Popen(  # our interpreter, fixed argv  # nosec B603
                [sys.executable, "-m", _WORKER_MODULE, str(child_sock.fileno()), str(memory_limit)],
                pass_fds=(child_sock.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # no forged lines in the parent's (JSON) log stream
                env=self._worker_environment(),
                cwd="/",
                start_new_session=True,  # its own process group, killed whole; Ctrl-C is ours
            )
        finally:
            child_sock.close()
        parent = multiprocessing.connection.Connection(parent_sock.detach())
        worker = _Worker(process, parent, memory_limit)
        try:
            readable = readable_entries(self._hidden, self._readable)
            parent.send_bytes(encode_control("setup", readable=readable, formats=self._formats))
        except OSError:
            pass  # the worker died at once: reported below
        if not parent.poll(self._start_timeout):
            worker.kill()
            raise ParseEngineFailed("parser worker did not start in time")
        try:
            ready = decode_message(parent.recv_bytes())
            worker.unrestricted = ready.get("unrestricted")
            if worker.unrestricted and self._hidden:
                _log.warning("parser worker file reads not restricted: %s", worker.unrestricted)
        except (EOFError, OSError, ValueError):
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
        self._start_idle((options or ParseOptions()).limits.max_memory_bytes)

    def _start_idle(self, memory_limit: int) -> None:
        self._release(self._acquire(memory_limit))

    def _prestart_quietly(self, memory_limit: int) -> None:
        """A failed start is only logged: the first parse starts a worker itself and reports
        why that fails."""
        try:
            self._start_idle(memory_limit)
        except Exception as error:
            _log.warning("parser worker prestart failed: %s", error)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for worker in idle:
            worker.stop()
        if self._texts is not None:
            shutil.rmtree(self._texts, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the port -------------------------------------------------------------------------
    def parse(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        text_file = self._text_file()
        try:
            return decode_reply(self._run(source, file_type, options, text_file), text_file)
        finally:
            text_file.unlink(missing_ok=True)

    def parse_to_file(
        self, source: Path, file_type: str, options: ParseOptions, target: Path
    ) -> ParsedText:
        """`parse`, the text left in a file: the worker's text file is moved to `target`
        (it must not exist), never read here (issue 24)."""
        text_file = self._text_file()
        try:
            reply = self._run(source, file_type, options, text_file)
            document, sizes = decode_reply_sizes(reply, text_file)
            if target.exists():
                raise ParseEngineFailed("the parsed text's target exists already")
            shutil.move(text_file, target)
            return ParsedText(document, target, sizes)
        finally:
            text_file.unlink(missing_ok=True)

    def _run(self, source: Path, file_type: str, options: ParseOptions, text_file: Path) -> bytes:
        """One request to a worker; its reply (the text is in `text_file`)."""
        limits = options.limits
        request = encode_request(source.absolute(), file_type, options, text_file)
        worker = self._acquire(limits.max_memory_bytes)
        keep: _Worker | None = None
        try:
            reply = self._exchange(worker, request, limits.max_seconds)
            worker.parses += 1
            if worker.alive() and worker.parses < self._max_parses:
                keep = worker
            else:
                worker.stop()
        finally:
            self._release(keep)
        return reply

    def _exchange(self, worker: _Worker, request: bytes, max_seconds: float) -> bytes:
        started = time.monotonic()
        try:
            worker.conn.send_bytes(request)
            if not worker.conn.poll(max_seconds + self._grace):
                worker.kill()
                raise ParseEngineFailed(f"parse timed out after {max_seconds:g}s")
            reply = worker.conn.recv_bytes()
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
