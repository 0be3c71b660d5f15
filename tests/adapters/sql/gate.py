"""Watching the SQLite WriterGate's queue, so tests wait on the mechanism, not on sleeps."""

from __future__ import annotations

import asyncio

from ragline.adapters.persistence.sql import SqlUnitOfWorkFactory
from ragline.adapters.persistence.sql.sqlite_connection import InlineEngine


async def until_queued(factory: SqlUnitOfWorkFactory, waiting: int = 1) -> None:
    """Return once `waiting` units of work queue at the factory's gate; each turn of the loop
    lets the others run (none sleeps), so a unit that is not queued by then never will be."""
    engine = factory.engine
    assert isinstance(engine, InlineEngine), "only SQLite units of work queue at a gate"
    for _ in range(1000):
        if engine.gate.waiting >= waiting:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{engine.gate.waiting} units of work queued, want {waiting}")
