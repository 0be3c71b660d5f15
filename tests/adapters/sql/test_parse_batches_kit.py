"""The parse-batch repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.parse_batches import ParseBatchContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteParseBatches(SqliteStore, ParseBatchContract):
    pass


class TestPostgresParseBatches(PostgresStore, ParseBatchContract):
    pass


class TestMariaDbParseBatches(MariaDbStore, ParseBatchContract):
    pass
