"""The parse-run repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.runs import ParseRunRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteRuns(SqliteStore, ParseRunRepositoryContract):
    pass


class TestPostgresRuns(PostgresStore, ParseRunRepositoryContract):
    pass


class TestMariaDbRuns(MariaDbStore, ParseRunRepositoryContract):
    pass
