"""A clock that moves forward by a fixed step on every read (deterministic durations)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = START, step: timedelta = timedelta(milliseconds=5)):
        self.current = start
        self.step = step

    def now(self) -> datetime:
        self.current += self.step
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


class FakeIds:
    def __init__(self, prefix: str = "id") -> None:
        self.prefix = prefix
        self.count = 0

    def new_id(self) -> str:
        self.count += 1
        return f"{self.prefix}-{self.count}"
