"""The real clock and id source (the core never reads time or makes ids itself)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime


class SystemClock:
    """Clock port: timezone-aware UTC wall time."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class UuidIds:
    """IdGenerator port: random UUID4 strings."""

    def new_id(self) -> str:
        return str(uuid.uuid4())
