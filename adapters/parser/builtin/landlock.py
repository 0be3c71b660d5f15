"""Hide files from the sandbox worker with Linux Landlock (no privileges needed).

Landlock only allows: once a process restricts itself, it can read files only beneath the
paths it was given rules for, and so can every process it starts (the JVM too). To hide a
few files (the data dir's secret key, a .env) and keep everything else readable, the parent
lists, for each ancestor of a hidden file, the ancestor's other entries, and the worker
allows reads beneath each of them. The hidden files' paths are never sent to the worker.

Limits: the picture is taken when the worker starts; an entry created later in one of those
ancestor folders is unreadable until the worker is recycled (keep the temp dir existing
before the sandbox starts). Only file reads are restricted (listing a folder still works).
Where Landlock is missing (not Linux, old kernel) nothing is restricted and the worker says so.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable
from pathlib import Path

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_ACCESS_READ_FILE = 1 << 2
_PR_SET_NO_NEW_PRIVS = 38


def readable_entries(hidden: Iterable[Path], also_readable: Iterable[Path] = ()) -> list[str]:
    """What the worker may read so that exactly the `hidden` files stay out of reach."""
    hidden_real = [p.resolve() for p in hidden if p.exists()]
    if not hidden_real:
        return []
    chains = {parent for p in hidden_real for parent in (p, *p.parents)}
    allowed: set[str] = {str(p.resolve()) for p in also_readable if p.exists()}
    for folder in sorted({p.parent for p in chains if p.parent != p} | {Path("/")}):
        if folder not in chains:
            continue
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            real = entry.resolve()
            if real in chains or any(
                h.is_relative_to(real) or real.is_relative_to(h) for h in hidden_real
            ):
                continue  # on the way to a hidden file, or a link leading to or into one
            allowed.add(str(real))
    return sorted(a for a in allowed if not any(Path(h).is_relative_to(a) for h in hidden_real))


def restrict_reads(allowed: Iterable[str]) -> str | None:
    """Allow file reads only beneath `allowed` for this process and its children.

    Returns None when in force, else why not (the caller reports it; it does not fail)."""
    paths = list(allowed)
    if not paths:
        return "nothing to hide"
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    if abi < 1:
        return f"landlock unavailable ({os.strerror(ctypes.get_errno())})"
    attr = struct.pack("=Q", _ACCESS_READ_FILE)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        return f"landlock ruleset refused ({os.strerror(ctypes.get_errno())})"
    try:
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = struct.pack("=Qi", _ACCESS_READ_FILE, fd)  # landlock_path_beneath_attr
                if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0) != 0:
                    return f"landlock rule refused for a path ({os.strerror(ctypes.get_errno())})"
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs refused ({os.strerror(ctypes.get_errno())})"
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            return f"landlock restrict refused ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return None
