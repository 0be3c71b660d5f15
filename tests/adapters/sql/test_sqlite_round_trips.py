"""OneHopConnection keeps its promises: one thread round trip per statement, the driver's
rows and counts, and a rollback that is only skipped when nothing can be open."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline.adapters.sql import SqlUnitOfWorkFactory, create_unit_of_work_factory, upgrade_to_head
from ragline.adapters.sql.sqlite_connection import OneHopConnection, one_hop_connector
from ragline.contracts.kits.unit_of_work import identity
from ragline.domain.parse_run import ParseRun


@pytest.fixture
def url(tmp_path: Path) -> str:
    made = f"sqlite:///{tmp_path / 'hops.db'}"
    upgrade_to_head(made)
    return made


@pytest.fixture
async def factory(url: str) -> AsyncIterator[SqlUnitOfWorkFactory]:
    made = create_unit_of_work_factory(url, busy_timeout_ms=300)
    yield made
    await made.dispose()


def _driver(uow: object) -> OneHopConnection:
    conn = uow._slot.conn  # type: ignore[attr-defined]
    driver = conn.sync_connection.connection.driver_connection
    assert isinstance(driver, OneHopConnection)
    return driver


async def test_a_statement_is_one_round_trip(factory: SqlUnitOfWorkFactory) -> None:
    run = ParseRun.open(identity(), datetime(2026, 1, 1, tzinfo=UTC))
    async with factory() as uow:
        driver = _driver(uow)
        before = driver._submitted
        await uow.runs.add(run)  # SAVEPOINT, INSERT, RELEASE
        assert driver._submitted - before == 3
        before = driver._submitted
        loaded = await uow.runs.get(run.task_id)
        assert driver._submitted - before == 1
        await uow.commit()
    assert loaded == run


async def test_rows_rowcount_and_lastrowid_come_back(tmp_path: Path) -> None:
    connection = await one_hop_connector(
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


async def test_rollback_waits_for_a_begin_still_in_flight(tmp_path: Path) -> None:
    """A BEGIN whose caller was cancelled may still be running on the connection's thread:
    the rollback must be queued behind it, not skipped because no transaction is open yet."""
    connection = await one_hop_connector(
        [str(tmp_path / "flight.db")], {"check_same_thread": False}
    )()
    connection._conn.isolation_level = None  # type: ignore[attr-defined]  # explicit BEGIN

    def slow_begin(conn: sqlite3.Connection) -> None:
        time.sleep(0.2)
        conn.execute("BEGIN IMMEDIATE")

    try:
        begin = asyncio.ensure_future(connection.call(slow_begin))
        await asyncio.sleep(0.05)
        assert not connection.in_transaction
        begin.cancel()
        await connection.rollback()
        await asyncio.sleep(0.3)  # the BEGIN has long finished on the thread
        assert not connection.in_transaction
    finally:
        await connection.close()


async def test_rollback_skips_the_round_trip_only_when_idle_and_outside_a_transaction(
    tmp_path: Path,
) -> None:
    connection = await one_hop_connector(
        [str(tmp_path / "idle.db")], {"check_same_thread": False}
    )()
    connection._conn.isolation_level = None  # type: ignore[attr-defined]
    try:
        before = connection._submitted
        await connection.rollback()
        assert connection._submitted == before
        await connection.cursor().execute("BEGIN IMMEDIATE")
        await connection.rollback()
        assert not connection.in_transaction
        assert connection._submitted == before + 2
    finally:
        await connection.close()
