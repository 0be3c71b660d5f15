"""SQLAlchemy adapter of the UnitOfWork port: SQLite (WAL), PostgreSQL, MariaDB/MySQL.

from ragline.adapters.persistence.sql import (
    ApiKeyCipher, create_unit_of_work_factory, upgrade_to_head,
)

upgrade_to_head(url)                                   # Alembic, blocking
factory = create_unit_of_work_factory(url, cipher=ApiKeyCipher(key))
async with factory() as uow: ...
await factory.dispose()

The migration functions load Alembic on first use (`__getattr__`): a process start that
finds the schema at head (`schema_revision.upgrade_when_behind`) never imports it.
"""

from typing import TYPE_CHECKING

from ragline.adapters.persistence.sql.api_keys import (
    ApiKeyCipher,
    SecretKeyError,
    load_or_create_key_file,
)
from ragline.adapters.persistence.sql.engine import (
    async_url,
    backend_of,
    create_async_engine_for,
    create_sync_engine_for,
    sync_url,
)
from ragline.adapters.persistence.sql.unit_of_work import (
    SqlUnitOfWork,
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
)

if TYPE_CHECKING:
    from ragline.adapters.persistence.sql.migrations import (
        current_revision,
        head_revision,
        upgrade_to_head,
        upgrade_to_head_async,
    )

_MIGRATIONS = {"current_revision", "head_revision", "upgrade_to_head", "upgrade_to_head_async"}


def __getattr__(name: str) -> object:
    if name in _MIGRATIONS:
        from ragline.adapters.persistence.sql import migrations

        return getattr(migrations, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ApiKeyCipher",
    "SecretKeyError",
    "SqlUnitOfWork",
    "SqlUnitOfWorkFactory",
    "async_url",
    "backend_of",
    "create_async_engine_for",
    "create_sync_engine_for",
    "create_unit_of_work_factory",
    "current_revision",
    "head_revision",
    "load_or_create_key_file",
    "sync_url",
    "upgrade_to_head",
    "upgrade_to_head_async",
]
