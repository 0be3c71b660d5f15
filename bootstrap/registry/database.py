"""Database vendors: the dialect of RAGLINE_DATABASE_URL. Every dialect is the one SQL
adapter today (SQLAlchemy gives each its driver); the registry is where another store's
unit of work would be named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ragline.application.ports.clock import Clock
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import DatabaseVendor, Settings


class OpenDatabase(UnitOfWorkFactory, Protocol):
    """A unit-of-work factory holding connections: the container's resource disposes it."""

    async def dispose(self) -> None: ...


Build = Callable[[Settings, Clock], OpenDatabase]


def sql(settings: Settings, clock: Clock) -> OpenDatabase:
    """Migrated to head when behind it, with the API key cipher; a shared database without
    a configured key is refused before it is touched."""
    from ragline.adapters.persistence.sql import create_unit_of_work_factory
    from ragline.adapters.persistence.sql.api_keys import resolve_keys
    from ragline.adapters.persistence.sql.schema_revision import upgrade_when_behind

    url = settings.resolved_database_url
    env_keys = settings.secret_key.get_secret_value() if settings.secret_key else None
    embedded = settings.embedded_key_file if settings.embedded_database else None
    keys = resolve_keys(env_keys, settings.secret_key_file, embedded)
    if settings.embedded_database:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade_when_behind(url)
    return create_unit_of_work_factory(url, cipher=keys.cipher(), clock=clock)


DATABASE: Port[DatabaseVendor, Build] = Port(
    part="database",
    setting="database_url",
    names=DatabaseVendor,
    vendors={
        DatabaseVendor.SQLITE: Vendor(sql, "sqlite"),
        DatabaseVendor.POSTGRESQL: Vendor(sql, "postgresql"),
        DatabaseVendor.MYSQL: Vendor(sql, "mysql"),
        DatabaseVendor.MARIADB: Vendor(sql, "mariadb"),
    },
    chosen=lambda settings: settings.database_vendor,
)
