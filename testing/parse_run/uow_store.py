"""A `RunStore` over the application's UnitOfWork port, so `ParseRunMachine` runs on any unit
of work: the SQL adapter on each backend, or a test double.

Every call is one unit of work, run to completion on an event loop the caller owns (the
machine is synchronous). The methods map onto the port as the use cases use it:
- `add` -> `runs.add`; `DuplicateTaskId` -> False.
- `save` -> `runs.save`; `ConcurrentUpdate` -> False. A run not newer than the expected
  version is refused by the port with ValueError before its compare-and-set; the store checks
  that it is, and counts it as refused.
- `supersede_and_add` -> `runs.mark_superseded` (the compare-and-set whose rowcount decides)
  and `runs.add` of the new run in one unit of work, as the retry use case does; the marked
  row must equal the run the domain superseded in memory.
- `task_ids` -> `runs.list_recent`.

The unit of work takes the events of the runs it adds or saves on commit; the machine
publishes a run's events itself, after the store said the write is durable. So the store
hands each unit a copy of the run without events (`held`): the row written is the same, and
the machine's run keeps its events for the machine to publish.

    store = UnitOfWorkRunStore(factory, loop)   # on an empty store, per example
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import attrs
import pytest

from ragline.application.ports.repositories.errors import ConcurrentUpdate, DuplicateTaskId
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import ParseRun

T = TypeVar("T")

ALL_RUNS = 1_000_000  # list_recent limit that means "every run" for a machine's store


def held(run: ParseRun) -> ParseRun:
    """The same run without its pending events (those stay with the machine's run)."""
    return attrs.evolve(run, stages=dict(run.stages))


class UnitOfWorkRunStore:
    """`RunStore` over a UnitOfWorkFactory: one unit of work per call, on `loop`."""

    def __init__(self, factory: UnitOfWorkFactory, loop: asyncio.AbstractEventLoop) -> None:
        self.factory = factory
        self.loop = loop

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(work)

    def add(self, run: ParseRun) -> bool:

        async def add() -> bool:
            async with self.factory() as uow:
                try:
                    await uow.runs.add(held(run))
                except DuplicateTaskId:
                    return False
                await uow.commit()
                return True

        return self.run(add())

    def get(self, task_id: str) -> ParseRun | None:
        async def get() -> ParseRun | None:
            async with self.factory() as uow:
                return await uow.runs.get(task_id)

        return self.run(get())

    def save(self, run: ParseRun, expected_version: int) -> bool:

        async def save() -> bool:
            async with self.factory() as uow:
                if run.version <= expected_version:
                    # The port refuses a save that would not change the row (ValueError,
                    # before its compare-and-set): check that it does, and count it refused.
                    with pytest.raises(ValueError):
                        await uow.runs.save(held(run), expected_version)
                    return False
                try:
                    await uow.runs.save(held(run), expected_version)
                except ConcurrentUpdate:
                    return False
                await uow.commit()
                return True

        return self.run(save())

    def supersede_and_add(self, previous: ParseRun, new_run: ParseRun) -> bool:

        async def supersede_and_add() -> bool:
            async with self.factory() as uow:
                if not await uow.runs.mark_superseded(previous.task_id, new_run.task_id):
                    return False  # leaving without commit: nothing changed
                try:
                    await uow.runs.add(held(new_run))
                except DuplicateTaskId:
                    return False  # the mark is rolled back with the unit of work
                marked = await uow.runs.get(previous.task_id)
                assert marked == previous, (
                    "mark_superseded wrote another row than the in-memory supersede:\n"
                    f" stored    {marked}\n in memory {previous}"
                )
                await uow.commit()
                return True

        return self.run(supersede_and_add())

    def task_ids(self) -> list[str]:
        async def task_ids() -> list[str]:
            async with self.factory() as uow:
                return [run.task_id for run in await uow.runs.list_recent(limit=ALL_RUNS)]

        return self.run(task_ids())


__all__ = ["UnitOfWorkRunStore"]
