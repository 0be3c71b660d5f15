"""The UnitOfWork kit (transactions, the events collected on commit) on SQLite, PostgreSQL
and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.unit_of_work import UnitOfWorkContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteUnitOfWork(SqliteStore, UnitOfWorkContract):
    pass


class TestPostgresUnitOfWork(PostgresStore, UnitOfWorkContract):
    pass


class TestMariaDbUnitOfWork(MariaDbStore, UnitOfWorkContract):
    pass
