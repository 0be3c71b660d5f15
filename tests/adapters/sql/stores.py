"""The SQL store under every persistence kit: one mixin per backend giving `uow_factory`.

A kit's test module subclasses each backend's mixin with the kit (mixin first, so its
fixtures win): SQLite (a file per test), PostgreSQL and MariaDB (a database per session,
see conftest.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from tests.adapters.sql.gate import until_queued


class SqlStore:
    """Units of work on `database_url` with the configured API-key secret."""

    @pytest.fixture
    def database_url(self) -> str:
        raise NotImplementedError

    @pytest.fixture
    async def uow_factory(
        self, database_url: str, api_key_secrets: tuple[bytes, bytes]
    ) -> AsyncIterator[SqlUnitOfWorkFactory]:
        factory = create_unit_of_work_factory(database_url, cipher=ApiKeyCipher(api_key_secrets[0]))
        yield factory
        await factory.dispose()


class SqliteStore(SqlStore):
    serializes_transactions = True

    async def until_queued(self, factory: UnitOfWorkFactory) -> None:
        assert isinstance(factory, SqlUnitOfWorkFactory)
        await until_queued(factory)

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str:
        url = f"sqlite:///{tmp_path / 'ragline.db'}"
        upgrade_to_head(url)
        return url


class PostgresStore(SqlStore):
    @pytest.fixture
    def database_url(self, postgres_database_url: str) -> str:
        return postgres_database_url


class MariaDbStore(SqlStore):
    @pytest.fixture
    def database_url(self, mariadb_database_url: str) -> str:
        return mariadb_database_url
