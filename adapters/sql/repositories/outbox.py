"""outbox: results waiting to be published, one row per task_id.

`put` is an upsert (re-putting a task's result sets its row back to PENDING with fresh
attempts); every mark is a compare-and-set on (status PENDING, attempts) that also adds one
to `attempts`, so two relays cannot both record the same attempt.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, select, update
from sqlalchemy.dialects import mysql, postgresql, sqlite

from ragline.adapters.sql.connection import ConnectionSlot
from ragline.adapters.sql.errors import store_errors
from ragline.adapters.sql.tables import outbox
from ragline.application.ports.clock import Clock
from ragline.application.ports.unit_of_work import OutboxMessage

PENDING, SENT, DEAD = "PENDING", "SENT", "DEAD"
MAX_ERROR_CHARS = 4000


def _to_message(row: Row[Any]) -> OutboxMessage:
    m = row._mapping
    return OutboxMessage(
        id=int(m["id"]),
        task_id=m["task_id"],
        topic=m["topic"],
        routing_key=m["routing_key"],
        body=bytes(m["body"]),
        attempts=int(m["attempts"]),
        next_attempt_at=m["next_attempt_at"],
        status=m["status"],
        last_error=m["last_error"],
    )


class SqlOutboxRepository:
    def __init__(self, slot: ConnectionSlot, clock: Clock) -> None:
        self._slot = slot
        self._clock = clock

    async def put(
        self, task_id: str, topic: str, routing_key: str, body: bytes, at: datetime
    ) -> None:
        fresh: dict[str, Any] = {
            "topic": topic,
            "routing_key": routing_key,
            "body": body,
            "attempts": 0,
            "next_attempt_at": at,
            "status": PENDING,
            "last_error": None,
            "updated_at": at,
        }
        conn = self._slot.conn
        dialect = conn.dialect.name
        row = {"task_id": task_id, "created_at": at, **fresh}
        statement: Any
        if dialect == "sqlite":
            statement = (
                sqlite.insert(outbox)
                .values(**row)
                .on_conflict_do_update(index_elements=[outbox.c.task_id], set_=fresh)
            )
        elif dialect == "postgresql":
            statement = (
                postgresql.insert(outbox)
                .values(**row)
                .on_conflict_do_update(index_elements=[outbox.c.task_id], set_=fresh)
            )
        else:
            statement = mysql.insert(outbox).values(**row).on_duplicate_key_update(**fresh)
        with store_errors("outbox put"):
            await conn.execute(statement)

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        with store_errors("outbox due"):
            result = await self._slot.conn.execute(
                select(outbox)
                .where(outbox.c.status == PENDING)
                .where(outbox.c.next_attempt_at <= now)
                .order_by(outbox.c.next_attempt_at, outbox.c.id)
                .limit(limit)
            )
            rows = result.all()
        return [_to_message(row) for row in rows]

    async def _mark(self, message_id: int, attempts: int, **values: Any) -> bool:
        with store_errors("outbox mark"):
            result = await self._slot.conn.execute(
                update(outbox)
                .where(outbox.c.id == message_id)
                .where(outbox.c.status == PENDING)
                .where(outbox.c.attempts == attempts)
                .values(attempts=outbox.c.attempts + 1, updated_at=self._clock.now(), **values)
            )
        return result.rowcount == 1

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        return await self._mark(message_id, attempts, status=SENT)

    async def mark_retry(
        self, message_id: int, attempts: int, next_attempt_at: datetime, error: str
    ) -> bool:
        return await self._mark(
            message_id,
            attempts,
            next_attempt_at=next_attempt_at,
            last_error=error[:MAX_ERROR_CHARS],
        )

    async def mark_dead(self, message_id: int, attempts: int, error: str) -> bool:
        return await self._mark(
            message_id, attempts, status=DEAD, last_error=error[:MAX_ERROR_CHARS]
        )

    async def get(self, task_id: str) -> OutboxMessage | None:
        with store_errors("outbox get"):
            result = await self._slot.conn.execute(
                select(outbox).where(outbox.c.task_id == task_id)
            )
            row = result.first()
        return None if row is None else _to_message(row)
