"""Clock and id ports: time and identity are passed in, never read inside the core."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...


class IdGenerator(Protocol):
    def new_id(self) -> str:
        """A fresh unique identifier."""
        ...
