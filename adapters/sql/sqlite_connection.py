"""aiosqlite connections that cost one thread round trip per statement.

aiosqlite runs every sqlite3 call on the connection's own thread, and SQLAlchemy's adapter
makes four calls per statement (open a cursor, execute, fetch all, close) plus a rollback
whenever a connection goes back to the pool. Each call is a round trip between the event
loop and that thread (two wake-ups, often a context switch), and on small files those
round trips cost more than the SQL. Here a statement is one call: the cursor is opened,
executed, drained and closed on the connection's thread and its rows come back buffered.
A rollback is skipped, without a round trip, only when SQLite reports no open transaction
and no call is queued or running on the connection's thread (sqlite3 itself would do
nothing then); otherwise it is queued behind the calls in flight, as before.
The transaction's BEGIN travels with its first statement (`defer_begin`): it is run on the
connection's thread right before that statement, in the same round trip. A transaction that
ends before any statement never reaches SQLite at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import aiosqlite

_Outcome = tuple[Any, list[Any], int, int | None]


def _begun(begin: str, fn: Callable[..., Any], conn: sqlite3.Connection, *args: Any) -> Any:
    """The deferred BEGIN, then the statement that was first in its transaction."""
    conn.execute(begin)
    return fn(conn, *args)


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


class BufferedCursor:
    """The cursor SQLAlchemy's aiosqlite adapter drives: `execute` is the only round trip;
    fetching and closing read the rows it brought back."""

    arraysize = 1

    def __init__(self, connection: OneHopConnection) -> None:
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


class OneHopConnection(aiosqlite.Connection):
    """An aiosqlite connection whose cursors are BufferedCursor (see the module docstring).
    It counts calls handed to its thread and calls finished there, so a rollback knows
    whether anything (a BEGIN whose caller was cancelled, say) is still in flight."""

    _submitted = 0  # written only on the event loop
    _finished = 0  # written only on the connection's thread
    _pending_begin: str | None = None  # a BEGIN waiting for the transaction's first statement

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._submitted += 1
        return await super()._execute(self._finishing, partial(fn, *args, **kwargs))

    def _finishing(self, function: Callable[[], Any]) -> Any:
        try:
            return function()
        finally:
            self._finished += 1

    def defer_begin(self, sql: str) -> None:
        """Start a transaction with `sql` (BEGIN ...) in the round trip of its first call."""
        self._pending_begin = sql

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(sqlite3_connection, *args)` on the connection's thread."""
        begin, self._pending_begin = self._pending_begin, None
        if begin is not None:
            return await self._execute(_begun, begin, fn, self._conn, *args)
        return await self._execute(fn, self._conn, *args)

    async def commit(self) -> None:
        if self._pending_begin is not None:  # nothing ran: there is nothing to commit
            self._pending_begin = None
            return
        await super().commit()

    def cursor(self) -> BufferedCursor:  # type: ignore[override]
        return BufferedCursor(self)

    async def rollback(self) -> None:
        self._pending_begin = None
        idle = self._submitted == self._finished
        if idle and self._connection is not None and not self._connection.in_transaction:
            return
        await super().rollback()


def one_hop_connector(
    args: Sequence[Any], kwargs: dict[str, Any]
) -> Callable[[], Awaitable[OneHopConnection]]:
    """An `async_creator` for SQLAlchemy: sqlite3.connect(*args, **kwargs) behind a
    OneHopConnection (the arguments are the ones the aiosqlite dialect would pass)."""

    async def connect() -> OneHopConnection:
        connection = OneHopConnection(partial(sqlite3.connect, *args, **kwargs), 64)
        thread = getattr(connection, "_thread", connection)  # a Thread itself before 0.22
        thread.daemon = True  # an unclosed connection must not keep the process alive
        return await connection

    return connect
