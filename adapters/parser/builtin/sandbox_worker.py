"""The sandbox's worker process.

Run as `python -m ragline.adapters.parser.builtin.sandbox_worker FD LIMIT`.

Sets its own address-space limit (soft, so the opendataloader JVM child may lift it), takes
the read restriction the parent sends first (Landlock: the secret key stays unreadable),
imports the parsers once (the pool keeps it warm), then answers one JSON request at a time:
the document's text goes to the file the request names, the reply says how long each part
is (sandbox_wire). Nothing is unpickled on either side.
"""

from __future__ import annotations

import importlib
import multiprocessing.connection
import resource
import signal
import sys
from typing import TYPE_CHECKING

from ragline.adapters.parser.builtin.landlock import restrict_reads
from ragline.adapters.parser.builtin.sandbox_wire import (
    decode_message,
    decode_request,
    encode_control,
    encode_document,
    encode_error,
)
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParseEngineFailed,
    UnsupportedFileType,
)

if TYPE_CHECKING:  # imported at run time after the read restriction (warm imports)
    from ragline.adapters.parser.builtin.registry import ParserRegistry


def _parse(registry: ParserRegistry, body: bytes) -> bytes:
    """Parse into the request's text file (txt and md in pieces: never one str of the
    file), then the pages, and answer (the document is let go on return: nothing of it is
    held while waiting for the next file)."""
    source, file_type, options, text_file = decode_request(body)
    parsed = registry.parse_to_file(source, file_type, options, text_file)
    return encode_document(parsed.document, parsed.sizes)


def worker_main(conn: multiprocessing.connection.Connection, memory_limit: int) -> None:
    """Child process loop: one request in, one reply out, until told to stop or recycled."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard >= memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    setup = decode_message(conn.recv_bytes())
    readable = [str(p) for p in setup.get("readable", [])]
    not_restricted = restrict_reads(readable) if readable else None
    from ragline.adapters.parser.builtin.registry import ParserRegistry  # warm imports happen here

    formats = setup.get("formats")  # None: the registry's own (every format, OCR bound)
    if formats is None:
        registry = ParserRegistry()
    else:
        module, _, name = str(formats).partition(":")
        registry = ParserRegistry(getattr(importlib.import_module(module), name))
    conn.send_bytes(encode_control("ready", unrestricted=not_restricted))
    while True:
        try:
            body = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if decode_message(body)["kind"] == "stop":
            return
        fatal = False
        try:
            reply = _parse(registry, body)
        except UnsupportedFileType as exc:
            reply = encode_error("unsupported", exc.reason)
        except InvalidFileContent as exc:
            reply = encode_error("invalid", exc.reason)
        except NoTextLayer as exc:
            reply = encode_error("no_text", exc.reason)
        except ParseEngineFailed as exc:
            reply = encode_error("engine", exc.reason)
            fatal = exc.reason.startswith("out of memory")
        except BaseException as exc:  # the worker must answer whatever happened
            reply = encode_error("engine", f"parser worker error: {type(exc).__name__}"[:300])
            fatal = True
        try:
            conn.send_bytes(reply)
        except MemoryError:
            conn.send_bytes(encode_error("engine", "out of memory while returning the result"))
            fatal = True
        if fatal:
            return  # a heap that hit its limit is not trusted for the next file


if __name__ == "__main__":
    main_conn = multiprocessing.connection.Connection(int(sys.argv[1]))
    worker_main(main_conn, int(sys.argv[2]))
