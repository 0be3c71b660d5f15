"""InlineConnection keeps its promises: statements run on the event loop's thread, BEGIN
IMMEDIATE right before a transaction's first statement (none for an empty one), and waiting
for another connection's write lock never blocks the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.persistence.sql import (
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    sqlite_connection,
    upgrade_to_head,
)
from ragline.adapters.persistence.sql.sqlite_connection import InlineConnection
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.domain.parse_run import ParseRun
from ragline.testing.kits.persistence import identity


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


def _sqlite(uow: object) -> sqlite3.Connection:
    conn = uow._slot.conn  # type: ignore[attr-defined]
    assert isinstance(conn, InlineConnection)
    return conn.driver_connection


class _Statements:
    """Counts what reaches sqlite3 on one connection (its trace callback)."""

    def __init__(self, driver: sqlite3.Connection) -> None:
        self.seen: list[str] = []
        driver.set_trace_callback(self.seen.append)

    def since(self, mark: int) -> list[str]:
        return [s.split()[0].upper() for s in self.seen[mark:]]


async def test_begin_immediate_goes_right_before_the_first_statement(
    factory: SqlUnitOfWorkFactory,
) -> None:
    run = ParseRun.open(identity(), datetime(2026, 1, 1, tzinfo=UTC))
    async with factory() as uow:
        driver = _sqlite(uow)
        trace = _Statements(driver)
        assert not driver.in_transaction
        await uow.runs.add(run)
        assert trace.since(0) == ["BEGIN", "SAVEPOINT", "INSERT", "RELEASE"]
        assert trace.seen[0] == "BEGIN IMMEDIATE" and driver.in_transaction
        loaded = await uow.runs.get(run.task_id)
        await uow.commit()
        assert trace.since(4) == ["SELECT", "COMMIT"] and not driver.in_transaction
        # the same unit of work goes on in a new transaction, begun the same way
        assert await uow.runs.get(run.task_id) == loaded
        assert trace.since(6) == ["BEGIN", "SELECT"]
    assert loaded == run


async def test_a_unit_of_work_without_statements_never_reaches_sqlite(
    factory: SqlUnitOfWorkFactory,
) -> None:
    async with factory() as uow:
        driver = _sqlite(uow)
        trace = _Statements(driver)
    async with factory() as again:
        assert _sqlite(again) is driver  # the pooled connection
        await again.commit()
    assert trace.seen == []


async def test_statements_run_on_the_event_loop_thread(factory: SqlUnitOfWorkFactory) -> None:
    threads: set[int] = set()
    async with factory() as uow:
        driver = _sqlite(uow)
        driver.create_function("thread_id", 0, lambda: threads.add(threading.get_ident()) or 1)
        await uow.runs.get("nothing")
        await uow.commit()
    async with factory.engine.connect() as conn:
        assert (await conn.exec_driver_sql("SELECT thread_id()")).scalar() == 1
    assert threads == {threading.get_ident()}


def _hold_write_lock(
    path: Path, seconds: float, held: threading.Event, release: threading.Event
) -> None:
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(seconds)
        other.execute("ROLLBACK")
    finally:
        other.close()


@contextlib.contextmanager
def lock_held_elsewhere(
    path: Path, seconds: float, release: threading.Event | None = None
) -> Iterator[None]:
    """Another connection (here: another thread, as another process would) holds the write
    lock from the moment this is entered, for `seconds` or until `release` is set."""
    held = threading.Event()
    holder = threading.Thread(
        target=_hold_write_lock, args=(path, seconds, held, release or threading.Event())
    )
    holder.start()
    held.wait(5)
    try:
        yield
    finally:
        holder.join()


class _CountingSleeps:
    """The sqlite_connection module's `asyncio`, counting the BEGIN retry sleeps it takes."""

    def __init__(self) -> None:
        self.sleeps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float) -> None:
        self.sleeps += 1
        await asyncio.sleep(delay)


async def test_waiting_for_the_write_lock_keeps_the_event_loop_running(
    db_file: Path, factory: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock is released only by a coroutine that runs while the unit of work waits for
    it: if the wait blocked the loop, the holder would give up after 10 s instead and
    `released_by_the_loop` would stay False."""
    counting = _CountingSleeps()
    monkeypatch.setattr(sqlite_connection, "asyncio", counting)
    release = threading.Event()
    released_by_the_loop = False

    async def release_once_the_unit_waits() -> None:
        nonlocal released_by_the_loop
        while counting.sleeps == 0:  # the unit of work has not met the lock yet
            await asyncio.sleep(0)
        released_by_the_loop = not release.is_set()
        release.set()

    run = ParseRun.open(identity(), datetime(2026, 1, 1, tzinfo=UTC))
    with lock_held_elsewhere(db_file, 10.0, release):
        releaser = asyncio.create_task(release_once_the_unit_waits())
        try:
            async with factory() as uow:
                await uow.runs.add(run)  # waits for the holder, then goes on
                await uow.commit()
        finally:
            releaser.cancel()
    assert released_by_the_loop and counting.sleeps >= 1
    async with factory() as uow:
        assert await uow.runs.get(run.task_id) == run


async def test_a_lock_held_past_busy_timeout_fails_as_locked(
    db_file: Path, factory: SqlUnitOfWorkFactory
) -> None:
    with (
        lock_held_elsewhere(db_file, 1.0),
        pytest.raises(PersistenceError, match="OperationalError"),
    ):
        async with factory() as uow:  # busy_timeout 300 ms
            await uow.runs.get("anything")
