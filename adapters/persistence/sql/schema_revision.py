"""The schema revision this code needs, and a start-up that migrates only when the database
is behind it: a database already at head is read once (one SELECT) and Alembic is not even
imported (loading it and its scripts cost ~0.12 s of every `ragline` process start)."""

from __future__ import annotations

from sqlalchemy import inspect, select, table
from sqlalchemy.engine import URL
from sqlalchemy.sql import column

from ragline.adapters.persistence.sql.engine import create_sync_engine_for, sqlite_parent

VERSION_TABLE = "ragline_alembic_version"
# The newest script in migrations/versions; a test holds it equal to Alembic's own head.
HEAD_REVISION = "0015_vectorizing_starts"


def revisions_recorded(url: str | URL) -> list[str]:
    """The rows of the version table (empty when the database was never migrated)."""
    engine = create_sync_engine_for(url)
    try:
        with engine.connect() as connection:
            if not inspect(connection).has_table(VERSION_TABLE):
                return []
            version = table(VERSION_TABLE, column("version_num"))
            return [str(row) for row in connection.execute(select(version.c.version_num)).scalars()]
    finally:
        engine.dispose()


def upgrade_when_behind(url: str | URL) -> bool:
    """Bring the database to HEAD_REVISION unless it is there already; True when Alembic
    ran. Several processes may start at once: Alembic's own locking (migrations) decides."""
    sqlite_parent(url)  # the data dir on a first start
    if revisions_recorded(url) == [HEAD_REVISION]:
        return False
    from ragline.adapters.persistence.sql.migrations import upgrade_to_head

    upgrade_to_head(url)
    return True
