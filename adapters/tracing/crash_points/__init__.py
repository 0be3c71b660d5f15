"""A test hook for crash campaigns: the worker SIGKILLs itself at a named point.

Off unless `RAGLINE_TEST_CRASH_AT` is set (never in production). The pipeline opens a
`ragline.stage` span around every stage, so the hook decorates the Tracing port and needs
no line of its own in the use cases. See docs/reliability.md ("Crash campaign").
"""

from ragline.adapters.tracing.crash_points.tracing import CrashingTracing, CrashPoint

__all__ = ["CrashPoint", "CrashingTracing"]
