"""Hole 3 of issue 12: two relays (two workers) on one database publish disjoint rows.

Each relay has its own engine (its own connections, as two worker processes would) on the
same PostgreSQL or MariaDB database (and SQLite file). Before rows were claimed, both relays
read the same due rows and both published them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest

from ragline.adapters.clock.system import SystemClock
from ragline.adapters.persistence.sql import create_unit_of_work_factory, upgrade_to_head
from ragline.adapters.wire_format.json import JsonResultPublisher
from ragline.application.pipeline.outbox_relay import OutboxRelay, RelayPolicy
from ragline.testing.kits.persistence import a_result

ROWS = 120


class RecordingPublisher:
    """A broker that takes a moment per publish (yields), recording what it was given."""

    def __init__(self) -> None:
        self.published: list[str] = []

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        await asyncio.sleep(0.001)
        self.published.append(routing_key)


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'relays.db'}"
        upgrade_to_head(url)
        return url
    fixture = "postgres_database_url" if request.param == "postgresql" else "mariadb_database_url"
    return str(request.getfixturevalue(fixture))


async def test_two_relays_publish_disjoint_rows(database_url: str) -> None:
    clock = SystemClock()
    prefix = f"relays-{uuid.uuid4().hex[:8]}"
    mine = [f"{prefix}-{n}" for n in range(ROWS)]
    factories = [create_unit_of_work_factory(database_url, clock=clock) for _ in range(2)]
    try:
        async with factories[0]() as uow:
            at = clock.now()
            for task in mine:
                await uow.outbox.put(a_result(task), "results", at)
            await uow.commit()
        publishers = [RecordingPublisher(), RecordingPublisher()]
        relays = [
            OutboxRelay(factory, JsonResultPublisher(publisher), clock, RelayPolicy(batch_size=9))
            for factory, publisher in zip(factories, publishers, strict=True)
        ]

        async def drain(relay: OutboxRelay) -> None:
            while (await relay.relay_once()).sent:
                pass

        await asyncio.gather(*(drain(relay) for relay in relays))
        # the session database is shared with other tests: look at our rows only
        first, second = ({t for t in p.published if t.startswith(prefix)} for p in publishers)
        everything = [t for p in publishers for t in p.published if t.startswith(prefix)]
        assert first and second, "both relays published"
        assert not first & second
        assert sorted(everything) == sorted(mine)  # each row published exactly once
        async with factories[1]() as uow:
            for task in mine:
                row = await uow.outbox.get(task)
                assert row is not None and row.status == "SENT" and row.attempts == 1
    finally:
        for factory in factories:
            await factory.dispose()
