"""The SQL UnitOfWork: one connection, one transaction, the repositories on it; commit
collects the events of the runs added or saved in it."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from ragline.adapters.clock.system import SystemClock
from ragline.adapters.persistence.sql.api_keys import ApiKeyCipher
from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.engine import DEFAULT_BUSY_TIMEOUT_MS, create_async_engine_for
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.repositories.chunks import SqlChunkRepository
from ragline.adapters.persistence.sql.repositories.documents import SqlDocumentRepository
from ragline.adapters.persistence.sql.repositories.model_configs import SqlModelConfigRepository
from ragline.adapters.persistence.sql.repositories.outbox import SqlOutboxRepository
from ragline.adapters.persistence.sql.repositories.parse_batches import SqlParseBatchRepository
from ragline.adapters.persistence.sql.repositories.parsed_logs import SqlParsedLogRepository
from ragline.adapters.persistence.sql.repositories.reembeddings import SqlReembeddingRepository
from ragline.adapters.persistence.sql.repositories.runs import SqlParseRunRepository
from ragline.adapters.persistence.sql.repositories.uploads import SqlUploadRepository
from ragline.adapters.persistence.sql.sqlite_connection import InlineEngine
from ragline.application.ports.clock import Clock
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.domain.parse_run import RunEvent

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


class SqlUnitOfWork:
    """`async with uow:` opens a connection and a transaction; leaving without `commit()`
    rolls back. After `commit()` the same unit of work may go on in a new transaction."""

    def __init__(
        self,
        engine: AsyncEngine | InlineEngine,
        cipher: ApiKeyCipher | None,
        clock: Clock,
    ) -> None:
        self._engine = engine
        self._slot = ConnectionSlot()
        self._opened = False
        self.parsed_logs = SqlParsedLogRepository(self._slot)
        self.runs = SqlParseRunRepository(self._slot)
        self.documents = SqlDocumentRepository(self._slot)
        self.chunks = SqlChunkRepository(self._slot)
        self.model_configs = SqlModelConfigRepository(self._slot, cipher)
        self.outbox = SqlOutboxRepository(self._slot, clock)
        self.parse_batches = SqlParseBatchRepository(self._slot)
        self.reembeddings = SqlReembeddingRepository(self._slot, cipher)
        self.uploads = SqlUploadRepository(self._slot)
        self._events: list[RunEvent] = []

    async def __aenter__(self) -> Self:
        if self._opened:
            raise PersistenceError("a unit of work is single-use: ask the factory for a new one")
        self._opened = True
        with store_errors("open unit of work"):
            conn = await self._engine.connect()
            try:
                await conn.begin()
            except BaseException:
                await conn.close()
                raise
        self._slot.attach(conn)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn = self._slot.conn
        self._slot.attach(None)
        self.runs.seen.clear()  # not committed: the runs keep their events
        try:
            if conn.in_transaction():
                await conn.rollback()
        except SQLAlchemyError as error:
            if exc is None:  # do not hide the error that made us leave
                raise PersistenceError("rollback failed") from error
        finally:
            await conn.close()

    async def commit(self) -> None:
        with store_errors("commit"):
            await self._slot.conn.commit()
        for run in self.runs.seen:
            self._events.extend(run.pull_events())
        self.runs.seen.clear()

    async def rollback(self) -> None:
        self.runs.seen.clear()
        with store_errors("rollback"):
            await self._slot.conn.rollback()

    def collect_new_events(self) -> list[RunEvent]:
        events, self._events = self._events, []
        return events


class SqlUnitOfWorkFactory:
    """Makes units of work on one engine (its connection pool). Call `dispose()` at exit.
    On SQLite the engine queues its connections in-process (see sqlite_connection)."""

    def __init__(
        self,
        engine: AsyncEngine | InlineEngine,
        cipher: ApiKeyCipher | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.engine = engine
        self._cipher = cipher
        self._clock: Clock = clock or SystemClock()

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.engine, self._cipher, self._clock)

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()


def create_unit_of_work_factory(
    url: str | URL,
    *,
    cipher: ApiKeyCipher | None = None,
    clock: Clock | None = None,
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    echo: bool = False,
) -> SqlUnitOfWorkFactory:
    """A UnitOfWorkFactory on the database at `url` (run `upgrade_to_head(url)` first).

    `cipher` encrypts model-config API keys; without one, storing or reading an API key
    raises SecretKeyError. `clock` stamps bookkeeping columns (default: system UTC).
    """
    engine = create_async_engine_for(url, busy_timeout_ms=busy_timeout_ms, echo=echo)
    return SqlUnitOfWorkFactory(engine, cipher=cipher, clock=clock)
