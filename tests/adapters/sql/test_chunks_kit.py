"""The chunk repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.chunks import ChunkRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteChunks(SqliteStore, ChunkRepositoryContract):
    pass


class TestPostgresChunks(PostgresStore, ChunkRepositoryContract):
    pass


class TestMariaDbChunks(MariaDbStore, ChunkRepositoryContract):
    pass
