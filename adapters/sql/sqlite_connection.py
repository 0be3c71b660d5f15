"""aiosqlite connections whose statements run on the event loop's own thread.

aiosqlite runs every sqlite3 call on the connection's own thread, and SQLAlchemy's adapter
makes four calls per statement (open a cursor, execute, fetch all, close). Each call is a
round trip between the event loop and that thread (two wake-ups, a GIL hand-over, often a
context switch). A statement on a local SQLite file in WAL mode takes microseconds; the
round trip costs more than the SQL, and on many small files it was most of a unit of work.
So here the connection's thread only opens and closes the database; a statement runs right
where it is awaited: the cursor is opened, executed, drained and closed in one call, and
its rows come back buffered.

What could block the loop for long is waiting for the write lock, and that is the one
thing done asynchronously: the connection's busy handler is off (busy_timeout 0) and the
transaction's BEGIN travels with its first statement (`defer_begin`); when another
connection or process holds the lock, BEGIN is retried with asyncio sleeps (1 ms doubling
to 50 ms) until `busy_timeout_seconds`, then fails with "database is locked" as SQLite's
own handler would. Every transaction begins with BEGIN IMMEDIATE, so a statement inside one
never waits for a lock. A transaction that ends before any statement never reaches SQLite.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import aiosqlite

_Outcome = tuple[Any, list[Any], int, int | None]
_FIRST_WAIT, _LONGEST_WAIT = 0.001, 0.05


def _run(conn: sqlite3.Connection, sql: str, parameters: Any, many: bool) -> _Outcome:
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(sql, parameters)
        elif parameters is None:
            cursor.execute(sql)
        else:
            cursor.execute(sql, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


def is_busy(error: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY (any extended code): another connection holds the lock."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF == sqlite3.SQLITE_BUSY)
    return "locked" in str(error)


class BufferedCursor:
    """The cursor SQLAlchemy's aiosqlite adapter drives: `execute` runs the statement and
    keeps its rows; fetching and closing read them."""

    arraysize = 1

    def __init__(self, connection: InlineConnection) -> None:
        self._connection = connection
        self._rows: list[Any] = []
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    async def __aenter__(self) -> BufferedCursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def execute(self, sql: str, parameters: Any = None) -> BufferedCursor:
        await self._apply(sql, parameters, False)
        return self

    async def executemany(self, sql: str, parameters: Any) -> BufferedCursor:
        await self._apply(sql, parameters, True)
        return self

    async def _apply(self, sql: str, parameters: Any, many: bool) -> None:
        outcome = await self._connection.call(_run, sql, parameters, many)
        self.description, self._rows, self.rowcount, self.lastrowid = outcome

    async def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    async def fetchmany(self, size: int | None = None) -> Sequence[Any]:
        count = self.arraysize if size is None else size
        rows, self._rows = self._rows[:count], self._rows[count:]
        return rows

    async def fetchall(self) -> Sequence[Any]:
        rows, self._rows = self._rows, []
        return rows

    async def close(self) -> None:
        self._rows = []


class InlineConnection(aiosqlite.Connection):
    """An aiosqlite connection whose calls run inline (see the module docstring). Its
    thread only connects and closes; `statements` counts what reached sqlite3."""

    statements = 0
    busy_timeout_seconds = 30.0
    _pending_begin: str | None = None  # a BEGIN waiting for the transaction's first statement

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or self._connection is None:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    def defer_begin(self, sql: str) -> None:
        """Start a transaction with `sql` (BEGIN ...) right before its first statement."""
        self._pending_begin = sql

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(sqlite3_connection, *args)`, after the deferred BEGIN if one is waiting."""
        conn = self._conn
        begin, self._pending_begin = self._pending_begin, None
        if begin is not None:
            await self._begin(conn, begin)
        self.statements += 1
        return fn(conn, *args)

    async def _begin(self, conn: sqlite3.Connection, sql: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.busy_timeout_seconds
        wait = _FIRST_WAIT
        while True:
            try:
                conn.execute(sql)
                self.statements += 1
                return
            except sqlite3.OperationalError as error:
                if not is_busy(error) or loop.time() + wait > deadline:
                    raise
            await asyncio.sleep(wait)
            wait = min(wait * 2, _LONGEST_WAIT)

    def cursor(self) -> BufferedCursor:  # type: ignore[override]
        return BufferedCursor(self)

    async def commit(self) -> None:
        if self._pending_begin is not None:  # nothing ran: there is nothing to commit
            self._pending_begin = None
            return
        self.statements += 1
        self._conn.commit()

    async def rollback(self) -> None:
        self._pending_begin = None
        conn = self._connection
        if conn is not None and conn.in_transaction:
            self.statements += 1
            conn.rollback()


def inline_connector(
    args: Sequence[Any], kwargs: dict[str, Any]
) -> Callable[[], Awaitable[InlineConnection]]:
    """An `async_creator` for SQLAlchemy: sqlite3.connect(*args, **kwargs) behind an
    InlineConnection (the arguments are the ones the aiosqlite dialect would pass)."""

    async def connect() -> InlineConnection:
        connection = InlineConnection(partial(sqlite3.connect, *args, **kwargs), 64)
        thread = getattr(connection, "_thread", connection)  # a Thread itself before 0.22
        thread.daemon = True  # an unclosed connection must not keep the process alive
        return await connection

    return connect
