"""Alembic environment: runs on the connection handed in by `upgrade_to_head`, or on the
URL in `sqlalchemy.url` (blocking drivers), or offline (`--sql`)."""

from __future__ import annotations

from alembic import context

from ragline.adapters.persistence.sql.engine import create_sync_engine_for, sync_url
from ragline.adapters.persistence.sql.schema_revision import VERSION_TABLE
from ragline.adapters.persistence.sql.tables import metadata

config = context.config


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        compare_type=True,
        **kwargs,  # type: ignore[arg-type]
    )


def run_offline() -> None:
    url = config.get_main_option("sqlalchemy.url")
    if not url:  # a configuration error, so not an assert (gone under python -O)
        raise RuntimeError("set sqlalchemy.url for offline (--sql) migrations")
    _configure(url=sync_url(url), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("pass a connection in config.attributes or set sqlalchemy.url")
    engine = create_sync_engine_for(url)
    try:
        with engine.begin() as conn:
            _configure(connection=conn)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
