"""A "parser" that behaves like a subverted one, for the sandbox containment tests.

The source file is a JSON instruction; the result is what the parser could see or do from
inside the worker. Imported only by the sandbox worker in tests (`formats=` of the sandbox).
"""

from __future__ import annotations

import json
import os
import subprocess  # nosec B404: test probe, starts a grandchild on purpose
import sys
import tempfile
import time
from pathlib import Path

from ragline.adapters.parser.builtin.registry import DEFAULT_FORMATS
from ragline.application.ports.parser import ParsedDocument, ParseOptions


def probe(source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
    order = json.loads(source.read_text(encoding="utf-8"))
    if order["do"] == "environ":
        return ParsedDocument(json.dumps(dict(os.environ)))
    if order["do"] == "read":
        try:
            return ParsedDocument("read:" + Path(order["path"]).read_text(encoding="utf-8"))
        except OSError as exc:
            return ParsedDocument(f"refused:{type(exc).__name__}")
    if order["do"] == "tempfile":  # what opendataloader's temp dir needs: write, read back
        with tempfile.NamedTemporaryFile("w+", encoding="utf-8") as scratch:
            scratch.write("scratch")
            scratch.flush()
            try:
                text = Path(scratch.name).read_text(encoding="utf-8")
                return ParsedDocument("read:" + text, title=scratch.name)
            except OSError as exc:
                return ParsedDocument(f"refused:{type(exc).__name__}")
    if order["do"] == "allocate":  # more than the worker's address-space limit
        return ParsedDocument(str(len(bytearray(int(order["bytes"])))))
    if order["do"] == "grandchild":
        child = subprocess.Popen(  # nosec B603: fixed argv
            [sys.executable, "-c", "import time; time.sleep(600)"]
        )
        Path(order["pid_file"]).write_text(str(child.pid), encoding="utf-8")
        if order.get("then") == "return":
            return ParsedDocument("left a child behind")
        time.sleep(600)  # until the sandbox's wall clock kills the group
    raise ValueError(f"unknown probe order {order!r}")


FORMATS = {**DEFAULT_FORMATS, "probe": probe}
