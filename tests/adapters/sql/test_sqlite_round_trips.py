"""InlineConnection keeps its promises: statements run inline (BEGIN with the first one),
the driver's rows and counts come back, and waiting for another connection's write lock
never blocks the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline.adapters.sql import SqlUnitOfWorkFactory, create_unit_of_work_factory, upgrade_to_head
from ragline.adapters.sql.sqlite_connection import InlineConnection, inline_connector
from ragline.application.ports.unit_of_work import PersistenceError
from ragline.contracts.kits.unit_of_work import identity
from ragline.domain.parse_run import ParseRun


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "hops.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


@pytest.fixture
async def factory(db_file: Path) -> AsyncIterator[SqlUnitOfWorkFactory]:
    made = create_unit_of_work_factory(f"sqlite:///{db_file}", busy_timeout_ms=300)
    yield made
    await made.dispose()


def _driver(uow: object) -> InlineConnection:
    conn = uow._slot.conn  # type: ignore[attr-defined]
    driver = conn.sync_connection.connection.driver_connection
    assert isinstance(driver, InlineConnection)
    return driver


async def test_begin_travels_with_the_first_statement(factory: SqlUnitOfWorkFactory) -> None:
    run = ParseRun.open(identity(), datetime(2026, 1, 1, tzinfo=UTC))
    async with factory() as uow:
        driver = _driver(uow)
        before = driver.statements
        assert not driver._conn.in_transaction
        await uow.runs.add(run)  # BEGIN IMMEDIATE, SAVEPOINT, INSERT, RELEASE
        assert driver.statements - before == 4 and driver._conn.in_transaction
        before = driver.statements
        loaded = await uow.runs.get(run.task_id)
        assert driver.statements - before == 1
        await uow.commit()
        assert driver.statements - before == 2 and not driver._conn.in_transaction
    assert loaded == run


async def test_a_unit_of_work_without_statements_never_reaches_sqlite(
    factory: SqlUnitOfWorkFactory,
) -> None:
    async with factory() as uow:
        driver = _driver(uow)
        before = driver.statements
    async with factory() as again:
        assert _driver(again) is driver  # the pooled connection
        await again.commit()
    assert driver.statements == before


async def test_rows_rowcount_and_lastrowid_come_back(tmp_path: Path) -> None:
    connection = await inline_connector(
        [str(tmp_path / "plain.db")], {"check_same_thread": False}
    )()
    try:
        cursor = connection.cursor()
        await cursor.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        await cursor.executemany("INSERT INTO t (v) VALUES (?)", [("a",), ("b",), ("c",)])
        assert cursor.rowcount == 3
        await cursor.execute("INSERT INTO t (v) VALUES (?)", ("d",))
        assert cursor.lastrowid == 4
        await cursor.execute("UPDATE t SET v = 'x' WHERE id > ?", (2,))
        assert cursor.rowcount == 2 and cursor.description is None
        await cursor.execute("SELECT id, v FROM t ORDER BY id")
        assert [d[0] for d in cursor.description] == ["id", "v"]
        assert await cursor.fetchone() == (1, "a")
        assert await cursor.fetchmany(2) == [(2, "b"), (3, "x")]
        assert await cursor.fetchall() == [(4, "x")]
        assert await cursor.fetchall() == []
    finally:
        await connection.close()


async def test_rollback_outside_a_transaction_does_nothing(tmp_path: Path) -> None:
    connection = await inline_connector([str(tmp_path / "idle.db")], {"check_same_thread": False})()
    connection._conn.isolation_level = None  # type: ignore[attr-defined]  # explicit BEGIN
    try:
        before = connection.statements
        await connection.rollback()
        assert connection.statements == before
        await connection.cursor().execute("BEGIN IMMEDIATE")
        await connection.rollback()
        assert not connection.in_transaction
        assert connection.statements == before + 2
    finally:
        await connection.close()


def _hold_write_lock(path: Path, seconds: float, held: threading.Event) -> None:
    """Another connection (here: another thread, as another process would) holds the lock."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        held.set()
        threading.Event().wait(seconds)
        other.execute("ROLLBACK")
    finally:
        other.close()


async def test_waiting_for_the_write_lock_keeps_the_event_loop_running(
    db_file: Path, factory: SqlUnitOfWorkFactory
) -> None:
    held = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(db_file, 0.15, held))
    holder.start()
    held.wait(5)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    beat = asyncio.create_task(ticker())
    run = ParseRun.open(identity(), datetime(2026, 1, 1, tzinfo=UTC))
    try:
        async with factory() as uow:
            await uow.runs.add(run)  # waits for the holder, then goes on
            await uow.commit()
    finally:
        beat.cancel()
        holder.join()
    assert ticks >= 10  # the loop kept running while the unit of work waited ~150 ms
    async with factory() as uow:
        assert await uow.runs.get(run.task_id) == run


async def test_a_lock_held_past_busy_timeout_fails_as_locked(
    db_file: Path, factory: SqlUnitOfWorkFactory
) -> None:
    held = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(db_file, 1.0, held))
    holder.start()
    held.wait(5)
    try:
        with pytest.raises(PersistenceError, match="OperationalError"):
            async with factory() as uow:  # busy_timeout 300 ms
                await uow.runs.get("anything")
    finally:
        holder.join()
