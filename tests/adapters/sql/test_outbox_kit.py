"""The outbox repository kit on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from ragline.testing.kits.outbox import OutboxRepositoryContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteOutbox(SqliteStore, OutboxRepositoryContract):
    pass


class TestPostgresOutbox(PostgresStore, OutboxRepositoryContract):
    pass


class TestMariaDbOutbox(MariaDbStore, OutboxRepositoryContract):
    pass
