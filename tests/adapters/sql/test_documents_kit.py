"""The documents-view kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.documents import DocumentRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteDocuments(SqliteStore, DocumentRepositoryContract):
    pass


class TestPostgresDocuments(PostgresStore, DocumentRepositoryContract):
    pass


class TestMariaDbDocuments(MariaDbStore, DocumentRepositoryContract):
    pass
