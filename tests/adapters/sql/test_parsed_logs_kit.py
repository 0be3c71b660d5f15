"""The parsed-log repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.parsed_logs import ParsedLogRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteParsedLogs(SqliteStore, ParsedLogRepositoryContract):
    pass


class TestPostgresParsedLogs(PostgresStore, ParsedLogRepositoryContract):
    pass


class TestMariaDbParsedLogs(MariaDbStore, ParsedLogRepositoryContract):
    pass
