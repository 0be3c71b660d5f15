"""The sandbox's worker process: `python -m ragline.adapters.parsers.sandbox_worker FD LIMIT`.

Sets its own address-space limit (soft, so the opendataloader JVM child may lift it), imports
the parsers once (the pool keeps it warm), then answers one pickled request at a time.
"""

from __future__ import annotations

import multiprocessing.connection
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from ragline.application.ports.parser import NoTextLayer, ParseEngineFailed, UnsupportedFileType


def worker_main(conn: multiprocessing.connection.Connection, memory_limit: int) -> None:
    """Child process loop: one request in, one reply out, until told to stop or recycled."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard >= memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    from ragline.adapters.parsers.registry import ParserRegistry  # warm imports happen here

    registry = ParserRegistry()
    conn.send(("ready",))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        source, file_type, options = request
        fatal = False
        try:
            parsed = registry.parse(Path(source), file_type, options)
            reply: tuple[Any, ...] = (
                "ok", parsed.markdown, parsed.title, parsed.page_count, parsed.warnings,
                parsed.backend, parsed.pages, parsed.images,
            )  # fmt: skip
        except UnsupportedFileType as exc:
            reply = ("unsupported", exc.reason)
        except NoTextLayer as exc:
            reply = ("no_text", exc.reason)
        except ParseEngineFailed as exc:
            reply = ("engine", exc.reason)
            fatal = exc.reason.startswith("out of memory")
        except BaseException as exc:  # the worker must answer whatever happened
            reply = ("engine", f"parser worker error: {type(exc).__name__}"[:300])
            fatal = True
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("engine", "out of memory while returning the result"))
            fatal = True
        if fatal:
            return  # a heap that hit its limit is not trusted for the next file


if __name__ == "__main__":
    main_conn = multiprocessing.connection.Connection(int(sys.argv[1]))
    worker_main(main_conn, int(sys.argv[2]))
