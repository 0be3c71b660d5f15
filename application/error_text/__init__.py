"""How a stage says "I failed with this code": the template turns it into fail_stage; and
how an error is put in words for someone outside the server.

Both ways a failure reason is formed — `describe(error)` and a `StageFailure` detail — mask
every known secret first (docs/security.md, Secrets): a reason is stored, published in the
result message and logged, so it must never carry a credential a remote answer echoed; and
`describe` names no filesystem path (an OSError says what went wrong, not on which file).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ragline.application.secrets import masked_prefix
from ragline.domain.parse_run import FailureCode

KEPT = 4096
"""How much of an error's text is kept, masked (`masked_prefix`): a reason holds 512
characters, and masking a remote's megabyte would cost seconds."""

_ABSOLUTE = re.compile(r"(?<![\w/:.~-])/([^\s/'\"]+)(?:/[^\s/'\"]*)*")
"""An absolute POSIX path, not the tail of a URL (`http://h/a`) or of a relative key."""


class StageFailure(Exception):
    """A stage's work failed for a known reason; `detail` (masked) goes after `CODE:`."""

    def __init__(self, code: FailureCode, detail: str) -> None:
        detail = masked_prefix(detail, KEPT)
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
    """A short, single-line description of an error for failure_reason and logs, with every
    known secret masked (adapters mask their own credentials too; this is the safeguard) and
    no paths: an OSError says what went wrong, not on which file."""
    if isinstance(error, OSError) and error.strerror:
        shown: object = f"[Errno {error.errno}] {error.strerror}" if error.errno else error.strerror
    else:
        shown = error
    text = without_paths(masked_prefix(shown, KEPT).replace("\n", " ").strip())
    name = type(error).__name__
    return f"{name}: {text}" if text else name
