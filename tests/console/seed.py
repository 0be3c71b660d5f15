"""Seeding a console test's data dir: DEAD outbox rows (the relay gave up) written through a
second container on the same database, and the HTML bits the tests read back."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from ragline.application.health import obtain
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.bootstrap.container import container_for
from ragline.testing.kits.persistence import a_result

CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


def seed_dead(data_dir: Path, *task_ids: str, error: str = "RESULT_NOTIFY_FAILED:gone") -> None:
    """One DEAD outbox row per task_id, as if the relay had given up publishing it. One
    transaction: a relay running beside (the app's in-process worker) never sees the rows
    PENDING, so it cannot claim and send one before it is marked dead."""

    async def seed() -> None:
        container = container_for(data_dir)
        try:
            factory: UnitOfWorkFactory = await obtain(container.uow_factory)
            clock = container.clock()
            async with factory() as uow:
                for task_id in task_ids:
                    await uow.outbox.put(a_result(task_id), "results", clock.now())
                for task_id in task_ids:
                    row = await uow.outbox.get(task_id)
                    assert row is not None
                    assert await uow.outbox.mark_dead(row.id, 0, error)
                await uow.commit()
        finally:
            await container.shutdown_resources()  # type: ignore[misc]

    asyncio.run(seed())


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a console page."""
    found = CSRF.search(html)
    assert found is not None, "no CSRF field on the page"
    return found.group(1)
