r"""The ParseRun properties (`ParseRunMachine`) on the SQL store: SQLite, PostgreSQL, MariaDB.

`UnitOfWorkRunStore` is `ragline.testing.parse_run.uow_store.UnitOfWorkRunStore` (the machine's
`RunStore` over the UnitOfWork port: one unit of work per call, on an event loop the backend
owns) on `ragline.adapters.persistence.sql`. `supersede_and_add` is what the retry use case does:
`mark_superseded` (a compare-and-set whose rowcount decides) and `add` of the new run in one
unit of work. Each example starts on an empty `parse_run` table. The settings are modest
(the reference store in tests/domain runs 200 examples of 30 steps); the three backends
together take ~35 s at load ~4 (SQLite 7 s, PostgreSQL 12 s with its test databases'
synchronous_commit off, MariaDB 16 s: most of it the commits).

`failure_details()` draws lone surrogates too ("\ud83d\ude00" is two code points in
Python); `FailureReason.of` makes them storable, so every example reaches the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from sqlalchemy import delete

from ragline.adapters.persistence.sql import (
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.adapters.persistence.sql.tables import parse_run
from ragline.domain.parse_run import FailureCode, ParseRun, Stage
from ragline.testing.kits.persistence import at, identity
from ragline.testing.parse_run import ParseRunMachine, RunStore
from ragline.testing.parse_run.uow_store import UnitOfWorkRunStore

MACHINE_SETTINGS = settings(max_examples=30, stateful_step_count=20, deadline=None)


class SqlBackend:
    """One database for a whole test: an event loop and a unit-of-work factory on it."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.factory: SqlUnitOfWorkFactory = create_unit_of_work_factory(url)

    def fresh_store(self) -> UnitOfWorkRunStore:
        """A store on an empty parse_run table (the machine numbers its task ids from 1)."""
        self.loop.run_until_complete(self._empty())
        return UnitOfWorkRunStore(self.factory, self.loop)

    async def _empty(self) -> None:
        async with self.factory.engine.begin() as conn:
            await conn.execute(delete(parse_run))

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self._empty())
            self.loop.run_until_complete(self.factory.dispose())
        finally:
            self.loop.close()


class SqlParseRunMachine(ParseRunMachine):
    def __init__(self, backend: SqlBackend) -> None:
        self.backend = backend
        super().__init__()

    def make_store(self) -> RunStore:
        return self.backend.fresh_store()


def run_machine(url: str) -> None:
    backend = SqlBackend(url)
    try:
        run_state_machine_as_test(lambda: SqlParseRunMachine(backend), settings=MACHINE_SETTINGS)
    finally:
        backend.close()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'ragline.db'}"
    upgrade_to_head(url)
    yield url


def test_parse_run_machine_on_sqlite(sqlite_url: str) -> None:
    run_machine(sqlite_url)


def test_parse_run_machine_on_postgres(postgres_database_url: str) -> None:
    run_machine(postgres_database_url)


def test_parse_run_machine_on_mariadb(mariadb_database_url: str) -> None:
    run_machine(mariadb_database_url)


async def test_a_failure_detail_with_lone_surrogates_is_stored(sqlite_url: str) -> None:
    factory = create_unit_of_work_factory(sqlite_url)
    run = ParseRun.open(identity(), at(0))
    run.start_stage(Stage.CLEANING, at(1))
    detail = "\ud83d\ude00 表 \udc80 name.pdf"  # a pair, then a lone one (bad file name)
    run.fail_stage(Stage.CLEANING, FailureCode.PARSE_ENGINE_FAILED, detail, at(2), 5)
    assert run.failure_reason is not None
    assert run.failure_reason.detail == "😀 表 \ufffd name.pdf"
    try:
        async with factory() as uow:
            await uow.runs.add(run)
            await uow.commit()
        async with factory() as uow:
            assert await uow.runs.get(run.task_id) == run
    finally:
        await factory.dispose()
