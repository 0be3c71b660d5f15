"""The UnitOfWork kit (transactions, the events collected on commit, a database that does
not answer) on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ragline.adapters.persistence.sql import SqlUnitOfWorkFactory, create_unit_of_work_factory
from ragline.testing.kits.unit_of_work import UnavailableDatabaseContract, UnitOfWorkContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Unavailable:
    """Units of work on `unavailable_url`, where the database does not answer."""

    @pytest.fixture
    async def unavailable_uow_factory(
        self, unavailable_url: str
    ) -> AsyncIterator[SqlUnitOfWorkFactory]:
        factory = create_unit_of_work_factory(unavailable_url, busy_timeout_ms=200)
        yield factory
        await factory.dispose()


class TestSqliteUnitOfWork(
    SqliteStore, Unavailable, UnitOfWorkContract, UnavailableDatabaseContract
):
    @pytest.fixture
    def unavailable_url(self, database_url: str, tmp_path: Path) -> Iterator[str]:
        """SQLite has no server: another process holds the write lock past the timeout."""
        holder = sqlite3.connect(tmp_path / "ragline.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield database_url
        finally:
            holder.execute("ROLLBACK")
            holder.close()


class TestPostgresUnitOfWork(
    PostgresStore, Unavailable, UnitOfWorkContract, UnavailableDatabaseContract
):
    @pytest.fixture
    def unavailable_url(self, database_url: str) -> str:
        return database_url.replace("127.0.0.1:5432", f"127.0.0.1:{closed_port()}")


class TestMariaDbUnitOfWork(
    MariaDbStore, Unavailable, UnitOfWorkContract, UnavailableDatabaseContract
):
    @pytest.fixture
    def unavailable_url(self, database_url: str) -> str:
        return database_url.replace("127.0.0.1:3306", f"127.0.0.1:{closed_port()}")
