"""The re-embedding repository kit on SQLite, PostgreSQL and MariaDB, and the target config's
API key kept as a token of model_config's cipher."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from ragline.adapters.persistence.sql import SqlUnitOfWorkFactory
from ragline.adapters.persistence.sql.tables import reembedding
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.domain.reembedding import EmbeddingSpec, Reembedding
from ragline.testing.kits.reembeddings import ReembeddingContract
from tests.adapters.sql.stores import MariaDbStore, PostgresStore, SqliteStore


class TestSqliteReembeddings(SqliteStore, ReembeddingContract):
    pass


class TestPostgresReembeddings(PostgresStore, ReembeddingContract):
    pass


class TestMariaDbReembeddings(MariaDbStore, ReembeddingContract):
    pass


class TestTheTargetKeyIsEncrypted(SqliteStore):
    async def test_at_rest_and_not_readable_without_the_cipher(
        self, uow_factory: SqlUnitOfWorkFactory, database_url: str
    ) -> None:
        key = "sk-live-0123456789abcdef"
        item = Reembedding.plan(
            "r1",
            "u1",
            0,
            1,
            EmbeddingSpec("openai", "m", 8),
            datetime(2026, 12, 2, tzinfo=UTC),
            api_key=key,
        )
        async with uow_factory() as uow:
            await uow.reembeddings.add(item)
            await uow.commit()
        async with uow_factory.engine.connect() as conn:
            raw = (await conn.execute(select(reembedding.c.api_key_encrypted))).scalar_one()
        assert raw and key not in raw
        keyless = SqlUnitOfWorkFactory(uow_factory.engine)
        async with keyless() as uow:
            with pytest.raises(PersistenceError) as raised:
                await uow.reembeddings.get("r1")
        assert key not in str(raised.value)
