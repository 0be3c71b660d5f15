"""The real clock (the core never reads time itself)."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Clock port: timezone-aware UTC wall time."""

    def now(self) -> datetime:
        return datetime.now(UTC)
