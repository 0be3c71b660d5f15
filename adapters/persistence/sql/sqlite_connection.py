"""SQLite without a thread or greenlets: a blocking SQLAlchemy connection behind the async
interface the repositories use.

A statement on a local SQLite file in WAL mode takes microseconds. Through SQLAlchemy's
asyncio layer it cost far more: every call spawned a greenlet and crossed to aiosqlite's
thread and back (two wake-ups, a GIL hand-over, often a context switch). On many small files
that was most of a unit of work. So on SQLite the units of work hold an `InlineConnection`:
SQLAlchemy's ordinary (sync) Connection on the stdlib sqlite3 driver, called right where it
is awaited, on the event loop's thread.

What could block the loop for long is waiting for the write lock, and that is the one thing
done asynchronously: SQLite's busy handler is off (busy_timeout 0), and before the first
statement of each transaction `BEGIN IMMEDIATE` is tried; while another connection or
process holds the lock it is retried with asyncio sleeps (1 ms doubling to 50 ms) until
`busy_timeout_seconds`, then fails with "database is locked" as SQLite's own handler would.
Connections of one engine queue for each other first, on a WriterGate (an in-process FIFO,
handed over at once): only one of them can write at a time anyway, and polling the lock
would only add sleeps. Inside a transaction begun IMMEDIATE no statement waits for a lock.
A transaction that ends before any statement never reaches SQLite. (One wait stays
blocking: switching a fresh file to WAL when a connection opens, retried with short sleeps;
migrations, which run first, have normally done it already.)
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Generator
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import CursorResult, Dialect
from sqlalchemy.exc import OperationalError

from ragline.adapters.persistence.sql.writer_gate import WriterGate

_FIRST_WAIT, _LONGEST_WAIT = 0.001, 0.05


def is_busy(error: BaseException) -> bool:
    """SQLITE_BUSY (any extended code): another connection holds the lock."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF == sqlite3.SQLITE_BUSY)
    return "locked" in str(error)


class InlineConnection:
    """The part of AsyncConnection the repositories use, on a blocking Connection."""

    def __init__(
        self, conn: Connection, busy_timeout_seconds: float, gate: asyncio.Lock | None = None
    ) -> None:
        self._conn = conn
        self._busy_timeout = busy_timeout_seconds
        self._gate = gate  # held from open to close

    @property
    def dialect(self) -> Dialect:
        return self._conn.dialect

    @property
    def driver_connection(self) -> sqlite3.Connection:
        driver = self._conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)  # narrows for mypy  # nosec B101
        return driver

    async def begin(self) -> None:
        self._conn.begin()

    async def execute(self, statement: Any, parameters: Any = None) -> CursorResult[Any]:
        await self._ensure_begun()
        return self._conn.execute(statement, parameters)

    async def exec_driver_sql(self, statement: str, parameters: Any = None) -> CursorResult[Any]:
        await self._ensure_begun()
        return self._conn.exec_driver_sql(statement, parameters)

    @contextlib.asynccontextmanager
    async def begin_nested(self) -> AsyncIterator[None]:
        await self._ensure_begun()
        with self._conn.begin_nested():
            yield

    def in_transaction(self) -> bool:
        return self._conn.in_transaction()

    async def commit(self) -> None:
        self._conn.commit()

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        gate, self._gate = self._gate, None
        try:
            self._conn.close()
        finally:
            if gate is not None:
                gate.release()

    async def _ensure_begun(self) -> None:
        """BEGIN IMMEDIATE before the transaction's first statement, waiting asynchronously
        while another connection holds the write lock."""
        if not self._conn.in_transaction():
            self._conn.begin()  # SQLAlchemy's bookkeeping (its autobegin would do the same)
        driver = self.driver_connection
        if driver.in_transaction:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_timeout
        wait = _FIRST_WAIT
        while True:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not is_busy(error) or loop.time() + wait > deadline:
                    raise OperationalError("BEGIN IMMEDIATE", None, error) from error
            await asyncio.sleep(wait)
            wait = min(wait * 2, _LONGEST_WAIT)


class _Opening:
    """`await engine.connect()` or `async with engine.connect() as conn` (and `begin()`,
    which commits on a clean exit), as AsyncEngine allows."""

    def __init__(self, engine: InlineEngine, transaction: bool) -> None:
        self._engine = engine
        self._transaction = transaction
        self._conn: InlineConnection | None = None

    def __await__(self) -> Generator[Any, None, InlineConnection]:
        return self._open().__await__()

    async def _open(self) -> InlineConnection:
        engine = self._engine
        gate = await engine.gate.enter()
        try:
            conn = InlineConnection(engine.sync_engine.connect(), engine.busy_timeout, gate)
        except BaseException:
            gate.release()
            raise
        if self._transaction:
            try:
                await conn.begin()
            except BaseException:
                await conn.close()
                raise
        return conn

    async def __aenter__(self) -> InlineConnection:
        self._conn = await self._open()
        return self._conn

    async def __aexit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if self._transaction and exc_type is None and conn.in_transaction():
                await conn.commit()
        finally:
            await conn.close()


class InlineEngine:
    """The part of AsyncEngine the unit of work uses: `connect()`, `begin()`, `dialect`,
    `dispose()`."""

    def __init__(self, engine: Engine, busy_timeout_seconds: float) -> None:
        self.sync_engine = engine
        self.dialect = engine.dialect
        self.busy_timeout = busy_timeout_seconds
        self.gate = WriterGate(busy_timeout_seconds)

    def connect(self) -> _Opening:
        return _Opening(self, transaction=False)

    def begin(self) -> _Opening:
        return _Opening(self, transaction=True)

    async def dispose(self) -> None:
        self.sync_engine.dispose()
