"""SQLite units of work of one factory queue on the WriterGate: in order, handed over at
once (no busy-handler sleep), and still failing after busy_timeout like SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.persistence.sql import (
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
    sqlite_connection,
    upgrade_to_head,
)
from ragline.application.ports.repositories.errors import PersistenceError
from tests.adapters.sql.gate import until_queued


@pytest.fixture
async def factory(tmp_path: Path) -> AsyncIterator[SqlUnitOfWorkFactory]:
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    upgrade_to_head(url)
    made = create_unit_of_work_factory(url, busy_timeout_ms=300)
    yield made
    await made.dispose()


class _CountingSleeps:
    """The sqlite_connection module's `asyncio`, counting the lock-retry sleeps it takes."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        await asyncio.sleep(delay)


async def test_units_of_work_queue_in_order_and_hand_over_at_once(
    factory: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    counting = _CountingSleeps()
    monkeypatch.setattr(sqlite_connection, "asyncio", counting)

    async def second() -> None:
        async with factory() as uow:
            order.append("second in")
            await uow.commit()

    async with factory() as uow:
        order.append("first in")
        waiting = asyncio.create_task(second())
        await until_queued(factory)
        assert order == ["first in"]  # queued behind the open unit of work
        assert not waiting.done()
        await uow.commit()
    await waiting
    assert order == ["first in", "second in"]
    assert counting.sleeps == []  # handed over by the gate: BEGIN never had to retry


async def test_waiting_longer_than_busy_timeout_fails(factory: SqlUnitOfWorkFactory) -> None:
    async with factory():
        with pytest.raises(PersistenceError, match="database is locked"):
            async with factory():
                pass
    async with factory() as uow:  # the gate is free again
        await uow.commit()
