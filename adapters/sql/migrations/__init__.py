"""Alembic migrations shipped inside the package; run them from code or the command line.

    from ragline.adapters.sql.migrations import upgrade_to_head
    upgrade_to_head("sqlite:///data/ragline.db")

    python -m ragline.adapters.sql.migrations sqlite:///data/ragline.db [revision]

The version table is `ragline_alembic_version`, so ragline can share a database with an
application that has its own Alembic history.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL

from ragline.adapters.sql.engine import create_sync_engine_for

VERSION_TABLE = "ragline_alembic_version"
SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config() -> Config:
    """An Alembic Config pointing at the shipped scripts (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    return config


def head_revision() -> str:
    """The newest revision the shipped scripts know."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def upgrade_to_head(url: str | URL, revision: str = "head") -> None:
    """Bring the database at `url` to `revision` (default: the newest). Idempotent, blocking."""
    engine = create_sync_engine_for(url)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        engine.dispose()


async def upgrade_to_head_async(url: str | URL, revision: str = "head") -> None:
    """`upgrade_to_head` in a worker thread, for callers inside an event loop."""
    await asyncio.to_thread(upgrade_to_head, url, revision)


def current_revision(url: str | URL) -> str | None:
    """The revision the database at `url` is at (None when never migrated)."""
    engine = create_sync_engine_for(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            return context.get_current_revision()
    finally:
        engine.dispose()
