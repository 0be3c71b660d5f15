"""The UnitOfWork contract kit on SQLite (a file per test), PostgreSQL and MariaDB."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.adapters.persistence.sql.tables import model_config
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.testing.kits.parse_batches import ParseBatchContract
from ragline.testing.kits.unit_of_work import (
    EncryptedApiKeysContract,
    StoredApiKey,
    UnavailableDatabaseContract,
    UnitOfWorkContract,
)
from tests.adapters.sql.gate import until_queued


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SqlUnitOfWorkKit(
    UnitOfWorkContract, EncryptedApiKeysContract, ParseBatchContract, UnavailableDatabaseContract
):
    """The whole kit (every capability) with its fixtures for the SQL adapter; subclasses
    name the database."""

    @pytest.fixture
    def database_url(self) -> str:
        raise NotImplementedError

    @pytest.fixture
    def unavailable_url(self, database_url: str) -> str:
        """The same database behind a port nothing listens on (a server that went away)."""
        raise NotImplementedError

    @pytest.fixture
    async def unavailable_uow_factory(
        self, unavailable_url: str
    ) -> AsyncIterator[SqlUnitOfWorkFactory]:
        factory = create_unit_of_work_factory(unavailable_url, busy_timeout_ms=200)
        yield factory
        await factory.dispose()

    @pytest.fixture
    async def uow_factory(
        self, database_url: str, api_key_secrets: tuple[bytes, bytes]
    ) -> AsyncIterator[SqlUnitOfWorkFactory]:
        factory = create_unit_of_work_factory(database_url, cipher=ApiKeyCipher(api_key_secrets[0]))
        yield factory
        await factory.dispose()

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


class TestSqliteUnitOfWork(SqlUnitOfWorkKit):
    serializes_transactions = True

    async def until_queued(self, factory: UnitOfWorkFactory) -> None:
        assert isinstance(factory, SqlUnitOfWorkFactory)
        await until_queued(factory)

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str:
        url = f"sqlite:///{tmp_path / 'ragline.db'}"
        upgrade_to_head(url)
        return url

    @pytest.fixture
    def unavailable_url(self, database_url: str, tmp_path: Path) -> Iterator[str]:
        """SQLite has no server: another process holds the write lock past the timeout."""
        holder = sqlite3.connect(tmp_path / "ragline.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield database_url
        finally:
            holder.execute("ROLLBACK")
            holder.close()


class TestPostgresUnitOfWork(SqlUnitOfWorkKit):
    @pytest.fixture
    def database_url(self, postgres_database_url: str) -> str:
        return postgres_database_url

    @pytest.fixture
    def unavailable_url(self, database_url: str) -> str:
        return database_url.replace("127.0.0.1:5432", f"127.0.0.1:{closed_port()}")


class TestMariaDbUnitOfWork(SqlUnitOfWorkKit):
    @pytest.fixture
    def database_url(self, mariadb_database_url: str) -> str:
        return mariadb_database_url

    @pytest.fixture
    def unavailable_url(self, database_url: str) -> str:
        return database_url.replace("127.0.0.1:3306", f"127.0.0.1:{closed_port()}")
