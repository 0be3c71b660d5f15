"""The model-config repository kit, API keys encrypted at rest included, on SQLite,
PostgreSQL and MariaDB."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
)
from ragline.adapters.persistence.sql.tables import model_config
from ragline.testing.kits.model_configs import (
    EncryptedApiKeysContract,
    ModelConfigRepositoryContract,
    StoredApiKey,
)
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class EncryptedKeys:
    """The second secret on the same database, and the raw stored api-key column."""

    @pytest.fixture
    async def other_key_uow_factory(
        self, database_url: str, api_key_secrets: tuple[bytes, bytes]
    ) -> AsyncIterator[SqlUnitOfWorkFactory]:
        factory = create_unit_of_work_factory(database_url, cipher=ApiKeyCipher(api_key_secrets[1]))
        yield factory
        await factory.dispose()

    @pytest.fixture
    def stored_api_key(self, uow_factory: SqlUnitOfWorkFactory) -> StoredApiKey:
        async def read(user_id: str) -> str | None:
            async with uow_factory.engine.connect() as conn:
                result = await conn.execute(
                    select(model_config.c.api_key_encrypted).where(
                        model_config.c.user_id == user_id
                    )
                )
                value: str | None = result.scalar_one()
                return value

        return read


class TestSqliteModelConfigs(
    SqliteStore, EncryptedKeys, ModelConfigRepositoryContract, EncryptedApiKeysContract
):
    pass


class TestPostgresModelConfigs(
    PostgresStore, EncryptedKeys, ModelConfigRepositoryContract, EncryptedApiKeysContract
):
    pass


class TestMariaDbModelConfigs(
    MariaDbStore, EncryptedKeys, ModelConfigRepositoryContract, EncryptedApiKeysContract
):
    pass
