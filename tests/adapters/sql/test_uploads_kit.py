"""The upload repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.uploads import UploadRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteUploads(SqliteStore, UploadRepositoryContract):
    pass


class TestPostgresUploads(PostgresStore, UploadRepositoryContract):
    pass


class TestMariaDbUploads(MariaDbStore, UploadRepositoryContract):
    pass
