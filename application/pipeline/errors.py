"""How a stage says "I failed with this code": the template turns it into fail_stage; and
how an error is put in words for someone outside the server (no filesystem paths)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ragline.domain.parse_run import FailureCode

_ABSOLUTE = re.compile(r"(?<![\w/:.~-])/([^\s/'\"]+)(?:/[^\s/'\"]*)*")
"""An absolute POSIX path, not the tail of a URL (`http://h/a`) or of a relative key."""


class StageFailure(Exception):
    """A stage's work failed for a known reason; `detail` goes after `CODE:`."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        super().__init__(f"{code.value}:{detail}")
        self.code = code
        self.detail = detail


@functools.cache
def _root_folders() -> frozenset[str]:
    try:
        return frozenset(entry.name for entry in Path("/").iterdir())
    except OSError:
        return frozenset()


def without_paths(text: str) -> str:
    """`text` with every absolute path into this machine's filesystem (one whose first part
    is a folder at its root: /tmp, /home, /srv, ...) cut to its last part: an error says
    what failed, never where the server keeps its files. `/api/v4/task` stays."""

    def cut(found: re.Match[str]) -> str:
        if found.group(1) not in _root_folders():
            return found.group(0)
        return "…/" + found.group(0).rstrip("/").rsplit("/", 1)[-1]

    return _ABSOLUTE.sub(cut, text)


def describe(error: BaseException) -> str:
    """A short, single-line description of an error for failure_reason (no secrets: ports
    raise their own messages, and API keys never reach an exception text; no paths: an
    OSError says what went wrong, not on which file)."""
    if isinstance(error, OSError) and error.strerror:
        text = f"[Errno {error.errno}] {error.strerror}" if error.errno else error.strerror
    else:
        text = str(error)
    text = without_paths(text.replace("\n", " ").strip())
    name = type(error).__name__
    return f"{name}: {text}" if text else name
