"""outbox: results waiting to be published, one row per task_id.

`put` is an upsert (re-putting a task's result sets its row back to PENDING with fresh
attempts); every mark is a compare-and-set on (status PENDING, attempts) that also adds one
to `attempts` and clears the claim, so two relays cannot both record the same attempt.

`claim` gives one relay pass the due rows for a lease: the candidates are selected
`FOR UPDATE SKIP LOCKED` (PostgreSQL, MySQL/MariaDB; SQLite has no row locks but runs one
writer at a time under BEGIN IMMEDIATE), then claimed by a compare-and-set on (PENDING,
claim free or expired) and read back by the claim's owner. A relay that dies holding a claim
only delays its rows until `claimed_until`.

Every task puts, finds and marks one row: the statements are built once per dialect (and per
set of marked columns), with bound parameters.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Row, bindparam, func, or_, select, update
from sqlalchemy.dialects import mysql, postgresql, sqlite

from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.tables import ID_MAX, outbox
from ragline.application.ports.clock import Clock
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.tasks import TaskResult, result_of_record, result_record

PENDING, SENT, DEAD = "PENDING", "SENT", "DEAD"
MAX_ERROR_CHARS = 4000


_FRESH = (
    "topic",
    "routing_key",
    "body",
    "attempts",
    "next_attempt_at",
    "status",
    "last_error",
    "updated_at",
    "claimed_by",
    "claimed_until",
)
_UNCLAIMED = {"claimed_by": None, "claimed_until": None}


def _bound(name: str) -> Any:
    return bindparam(f"b_{name}", type_=outbox.c[name].type)


@cache
def _put_statement(dialect: str) -> Any:
    """INSERT every column from `b_<column>`; on a task_id already there, SET the fresh
    columns to the values just offered (the row goes back to PENDING, attempts 0)."""
    values = {name: _bound(name) for name in ("task_id", "created_at", *_FRESH)}
    if dialect == "sqlite":
        lite = sqlite.insert(outbox).values(values)
        return lite.on_conflict_do_update(
            index_elements=[outbox.c.task_id], set_={n: lite.excluded[n] for n in _FRESH}
        )
    if dialect == "postgresql":
        pg = postgresql.insert(outbox).values(values)
        return pg.on_conflict_do_update(
            index_elements=[outbox.c.task_id], set_={n: pg.excluded[n] for n in _FRESH}
        )
    my = mysql.insert(outbox).values(values)
    return my.on_duplicate_key_update({n: my.inserted[n] for n in _FRESH})


@cache
def _due_statement(limit: int) -> Any:
    return (
        select(outbox)
        .where(outbox.c.status == PENDING)
        .where(outbox.c.next_attempt_at <= _bound("next_attempt_at"))
        .order_by(outbox.c.next_attempt_at, outbox.c.id)
        .limit(limit)
    )


def _claim_free() -> Any:
    return or_(
        outbox.c.claimed_until.is_(None),
        outbox.c.claimed_until <= bindparam("b_now", type_=outbox.c.claimed_until.type),
    )


@cache
def _claimable_statement(limit: int) -> Any:
    due = bindparam("b_now", type_=outbox.c.next_attempt_at.type)
    return (
        select(outbox.c.id)
        .where(outbox.c.status == PENDING)
        .where(outbox.c.next_attempt_at <= due)
        .where(_claim_free())
        .order_by(outbox.c.next_attempt_at, outbox.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )


_CLAIM = (
    update(outbox)
    .where(outbox.c.id.in_(bindparam("match_ids", expanding=True)))
    .where(outbox.c.status == PENDING)
    .where(_claim_free())
    .values(claimed_by=_bound("claimed_by"), claimed_until=_bound("claimed_until"))
)
_CLAIMED = (
    select(outbox)
    .where(outbox.c.claimed_by == _bound("claimed_by"))
    .where(outbox.c.id.in_(bindparam("match_ids", expanding=True)))
    .order_by(outbox.c.next_attempt_at, outbox.c.id)
)
_REDRIVE = (
    update(outbox)
    .where(outbox.c.task_id == _bound("task_id"))
    .where(outbox.c.status == DEAD)
    .values(
        status=PENDING,
        attempts=0,
        next_attempt_at=_bound("next_attempt_at"),
        updated_at=_bound("updated_at"),
        claimed_by=None,
        claimed_until=None,
    )
)
_COUNTS = select(outbox.c.status, func.count()).group_by(outbox.c.status)


@cache
def _list_statement(by_status: bool, by_task: bool, limit: int) -> Any:
    query = select(outbox).where(outbox.c.id > bindparam("after_id", type_=outbox.c.id.type))
    if by_status:
        query = query.where(outbox.c.status == _bound("status"))
    if by_task:
        query = query.where(outbox.c.task_id == _bound("task_id"))
    return query.order_by(outbox.c.id).limit(limit)


@cache
def _mark_statement(columns: tuple[str, ...]) -> Any:
    """The compare-and-set on (id, PENDING, attempts) that bumps attempts and sets
    `updated_at` and `columns` from `b_<column>`."""
    return (
        update(outbox)
        .where(outbox.c.id == bindparam("match_id", type_=outbox.c.id.type))
        .where(outbox.c.status == PENDING)
        .where(outbox.c.attempts == bindparam("match_attempts", type_=outbox.c.attempts.type))
        .values(
            {
                "attempts": outbox.c.attempts + 1,
                "updated_at": _bound("updated_at"),
                "claimed_by": None,
                "claimed_until": None,
                **{name: _bound(name) for name in columns},
            }
        )
    )


_GET = select(outbox).where(outbox.c.task_id == _bound("task_id"))


def _result_of(row_id: object, body: bytes) -> TaskResult:
    """The `body` column keeps the result's record as JSON (rows written before it was
    stored as a value hold its ParseResult message, which reads the same)."""
    try:
        return result_of_record(json.loads(body))
    except ValueError as error:
        raise PersistenceError(f"outbox row {row_id} holds no result: {error}") from error


def _to_message(row: Row[Any]) -> OutboxMessage:
    m = row._mapping
    return OutboxMessage(
        id=int(m["id"]),
        task_id=m["task_id"],
        topic=m["topic"],
        routing_key=m["routing_key"],
        result=_result_of(m["id"], bytes(m["body"])),
        attempts=int(m["attempts"]),
        next_attempt_at=m["next_attempt_at"],
        status=m["status"],
        last_error=m["last_error"],
        claimed_by=m["claimed_by"],
        claimed_until=m["claimed_until"],
        updated_at=m["updated_at"],
    )


class SqlOutboxRepository:
    def __init__(self, slot: ConnectionSlot, clock: Clock) -> None:
        self._slot = slot
        self._clock = clock

    async def put(self, result: TaskResult, topic: str, at: datetime) -> None:
        fresh: dict[str, Any] = {
            "topic": topic,
            "routing_key": result.routing_key,
            "body": json.dumps(result_record(result), ensure_ascii=False).encode("utf-8"),
            "attempts": 0,
            "next_attempt_at": at,
            "status": PENDING,
            "last_error": None,
            "updated_at": at,
            **_UNCLAIMED,
        }
        conn = self._slot.conn
        row = {"task_id": result.task_id, "created_at": at, **fresh}
        statement = _put_statement(conn.dialect.name)
        with store_errors("outbox put"):
            await conn.execute(statement, {f"b_{name}": value for name, value in row.items()})

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        with store_errors("outbox due"):
            result = await self._slot.conn.execute(
                _due_statement(limit), {"b_next_attempt_at": now}
            )
            rows = result.all()
        return [_to_message(row) for row in rows]

    async def claim(
        self, now: datetime, until: datetime, owner: str, limit: int = 100
    ) -> list[OutboxMessage]:
        conn = self._slot.conn
        with store_errors("outbox claim"):
            result = await conn.execute(_claimable_statement(limit), {"b_now": now})
            ids = [int(row[0]) for row in result.all()]
            if not ids:
                return []
            claimed = await conn.execute(
                _CLAIM,
                {"match_ids": ids, "b_now": now, "b_claimed_by": owner, "b_claimed_until": until},
            )
            result = await conn.execute(_CLAIMED, {"match_ids": ids, "b_claimed_by": owner})
            rows = result.all()
        if len(rows) != claimed.rowcount:  # the owner was not unique to this claim
            raise PersistenceError(
                f"outbox claim by {owner!r}: {claimed.rowcount} rows claimed, {len(rows)} read"
            )
        return [_to_message(row) for row in rows]

    async def list_messages(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        if after_id >= ID_MAX:  # no row has a wider id
            return []
        statement = _list_statement(status is not None, task_id is not None, limit)
        params: dict[str, Any] = {"after_id": after_id}
        if status is not None:
            params["b_status"] = status
        if task_id is not None:
            params["b_task_id"] = task_id
        with store_errors("outbox list"):
            result = await self._slot.conn.execute(statement, params)
            rows = result.all()
        return [_to_message(row) for row in rows]

    async def count_by_status(self) -> dict[str, int]:
        with store_errors("outbox counts"):
            result = await self._slot.conn.execute(_COUNTS)
            return {str(status): int(count) for status, count in result.all()}

    async def redrive(self, task_id: str, at: datetime) -> bool:
        params = {"b_task_id": task_id, "b_next_attempt_at": at, "b_updated_at": at}
        with store_errors("outbox redrive"):
            result = await self._slot.conn.execute(_REDRIVE, params)
        return result.rowcount == 1

    async def _mark(self, message_id: int, attempts: int, **values: Any) -> bool:
        with store_errors("outbox mark"):
            params = {f"b_{name}": value for name, value in values.items()}
            params.update(
                match_id=message_id, match_attempts=attempts, b_updated_at=self._clock.now()
            )
            result = await self._slot.conn.execute(_mark_statement(tuple(sorted(values))), params)
        return result.rowcount == 1

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        return await self._mark(message_id, attempts, status=SENT, last_error=None)

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
            result = await self._slot.conn.execute(_GET, {"b_task_id": task_id})
            row = result.first()
        return None if row is None else _to_message(row)
