"""The transactional outbox: results written with the state they report, sent later."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

import attrs

from ragline.application.tasks import TaskResult


@attrs.frozen
class OutboxMessage:
    """A result waiting to be published; written in the same transaction as the terminal
    state, so a crash between commit and publish loses nothing."""

    id: int
    task_id: str
    topic: str
    routing_key: str
    result: TaskResult
    attempts: int
    next_attempt_at: datetime
    status: str  # PENDING | SENT | DEAD
    last_error: str | None = None
    claimed_by: str | None = None  # the relay pass holding the row, until `claimed_until`
    claimed_until: datetime | None = None
    updated_at: datetime | None = None


class OutboxRepository(Protocol):
    async def put(self, result: TaskResult, topic: str, at: datetime) -> None:
        """One row per task_id: insert it PENDING, or set an existing row back to PENDING with
        the new result (a redelivered terminal task re-sends its result). The result is
        kept as a value; the relay's publisher writes its message."""
        ...

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        """PENDING rows whose next_attempt_at <= now, oldest first (a read: no claim)."""
        ...

    async def claim(
        self, now: datetime, until: datetime, owner: str, limit: int = 100
    ) -> list[OutboxMessage]:
        """Claim up to `limit` due PENDING rows whose claim is free or expired
        (`claimed_until` <= now): set `claimed_by=owner`, `claimed_until=until` and return
        them, oldest first. Concurrent claims (other units of work) never return the same
        row while its claim lasts: PostgreSQL/MySQL pick rows `FOR UPDATE SKIP LOCKED`,
        SQLite serialises writers; the UPDATE is a compare-and-set on (PENDING, claim free
        or expired). `owner` should be unique per claim (the rows are read back by it).
        The claim takes effect on commit."""
        ...

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        """CAS PENDING -> SENT where attempts matches; True iff rowcount == 1. Clears
        `last_error` (a redriven row keeps its DEAD reason only until it is sent). Every
        mark also clears the claim."""
        ...

    async def mark_retry(
        self, message_id: int, attempts: int, next_attempt_at: datetime, error: str
    ) -> bool:
        """CAS: still PENDING with `attempts`; store attempts+1, the next time and the error."""
        ...

    async def mark_dead(self, message_id: int, attempts: int, error: str) -> bool:
        """CAS PENDING -> DEAD (dead-lettered after the last attempt)."""
        ...

    async def get(self, task_id: str) -> OutboxMessage | None: ...

    async def list_messages(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        """Rows with id > `after_id` (in id order, at most `limit`), of one status and/or
        one task when given: what an operator pages through."""
        ...

    async def count_by_status(self) -> Mapping[str, int]:
        """How many rows each status has (a status without rows is absent)."""
        ...

    async def redrive(self, task_id: str, at: datetime) -> bool:
        """CAS DEAD -> PENDING: `UPDATE ... SET status='PENDING', attempts=0,
        next_attempt_at=:at WHERE task_id=:id AND status='DEAD'`; True iff rowcount == 1.
        `last_error` is kept until the next attempt replaces it."""
        ...
