"""The re-embedding repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.reembeddings import ReembeddingContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteReembeddings(SqliteStore, ReembeddingContract):
    pass


class TestPostgresReembeddings(PostgresStore, ReembeddingContract):
    pass


class TestMariaDbReembeddings(MariaDbStore, ReembeddingContract):
    pass
