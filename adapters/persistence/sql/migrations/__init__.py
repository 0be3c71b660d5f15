"""Alembic migrations shipped inside the package; run them from code or the command line.

    from ragline.adapters.persistence.sql.migrations import upgrade_to_head
    upgrade_to_head("sqlite:///data/ragline.db")

    python -m ragline.adapters.persistence.sql.migrations sqlite:///data/ragline.db [revision]

The version table is `ragline_alembic_version`, so ragline can share a database with an
application that has its own Alembic history.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

from ragline.adapters.persistence.sql.engine import create_sync_engine_for, sqlite_parent
from ragline.adapters.persistence.sql.schema_revision import VERSION_TABLE, revisions_recorded

LOCK_TIMEOUT_S = 600
_LOCK_NAME = "ragline_migrations"
_LOCK_KEY = 0x7261676C696E65  # "ragline"
SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config() -> Config:
    """An Alembic Config pointing at the shipped scripts (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    return config


def head_revision() -> str:
    """The newest revision the shipped scripts know."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None  # narrows for mypy  # nosec B101
    return head


def _take_migration_lock(connection: Connection) -> None:
    """Let one process migrate at a time; the others wait, then find the schema at head.

    PostgreSQL: a transaction-level advisory lock, taken inside the migration transaction.
    MySQL: a named lock held by the session (DDL commits implicitly there), taken before the
    migration transaction and released only after it commits: released earlier, a waiter
    reads the version row of the last migration before its UPDATE commits and runs that
    migration a second time. SQLite: BEGIN IMMEDIATE already serializes the transaction.
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})


def _take_session_lock(connection: Connection) -> None:
    if connection.dialect.name in ("mysql", "mariadb"):
        got = connection.execute(
            text("SELECT GET_LOCK(:name, :timeout)"),
            {"name": _LOCK_NAME, "timeout": LOCK_TIMEOUT_S},
        ).scalar()
        connection.commit()
        if got != 1:
            raise TimeoutError(f"another migration held {_LOCK_NAME} for {LOCK_TIMEOUT_S}s")


def _release_session_lock(connection: Connection) -> None:
    if connection.dialect.name in ("mysql", "mariadb"):
        connection.execute(text("SELECT RELEASE_LOCK(:name)"), {"name": _LOCK_NAME})
        connection.commit()


def upgrade_to_head(url: str | URL, revision: str = "head") -> None:
    """Bring the database at `url` to `revision` (default: the newest). Idempotent,
    blocking, safe to call from several processes at once."""
    sqlite_parent(url)
    engine = create_sync_engine_for(url)
    try:
        with engine.connect() as connection:
            _take_session_lock(connection)
            try:
                with connection.begin():
                    _take_migration_lock(connection)
                    config = alembic_config()
                    config.attributes["connection"] = connection
                    command.upgrade(config, revision)
            finally:
                _release_session_lock(connection)
    finally:
        engine.dispose()


async def upgrade_to_head_async(url: str | URL, revision: str = "head") -> None:
    """`upgrade_to_head` in a worker thread, for callers inside an event loop."""
    await asyncio.to_thread(upgrade_to_head, url, revision)


def current_revision(url: str | URL) -> str | None:
    """The revision the database at `url` is at (None when never migrated)."""
    recorded = revisions_recorded(url)
    if len(recorded) > 1:  # the history is linear: several rows mean a hand-edited table
        raise RuntimeError(f"{VERSION_TABLE} holds several revisions: {recorded}")
    return recorded[0] if recorded else None
