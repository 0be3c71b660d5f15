"""Misconfiguration: settings a process cannot start with.

Raised where the mistake is found — bootstrap (an unknown vendor, a value of the wrong kind),
the SQL adapter (a shared database without an API key encryption key), the worker (the
in-process bus on a shared database) — and said by the driving adapter in one line naming
what to set, exit 2, no traceback: a setting to fix, not a crash.
"""

from __future__ import annotations


class Misconfiguration(Exception):
    """The message names the setting and what it may be."""
