"""What every fake repository shares: the unit it works in, the stored-row helpers."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from ragline.application.ports.repositories.errors import PersistenceError
from ragline.domain.parse_run import ParseRun

if TYPE_CHECKING:  # the unit of work builds the repositories: no import at run time
    from tests.fakes.unit_of_work import FakeUnitOfWork


def snapshot(run: ParseRun) -> ParseRun:
    """An independent copy of a run without pending events (what storage would return)."""
    return attrs.evolve(run, stages=dict(run.stages))


def utc(value: datetime) -> datetime:
    """The time as stored: aware UTC; a naive datetime is refused like the SQL adapter does."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise PersistenceError(f"naive datetime refused (store aware UTC times): {value!r}")
    return value.astimezone(UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def stored(run: ParseRun) -> ParseRun:
    """The row written for `run`: a snapshot with every time in UTC."""
    stages = {
        stage: attrs.evolve(
            state,
            started_at=_utc_or_none(state.started_at),
            finished_at=_utc_or_none(state.finished_at),
        )
        for stage, state in run.stages.items()
    }
    return attrs.evolve(
        run,
        stages=stages,
        created_at=utc(run.created_at),
        started_at=_utc_or_none(run.started_at),
        finished_at=_utc_or_none(run.finished_at),
    )


class FakeRepository:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow
        self.db = uow.db

    async def check(self, name: str) -> None:
        """Every statement yields to the loop once, so concurrent units of work interleave
        the way separate connections do."""
        self.uow.require_active()
        self.db.faults.check(f"uow.{name}")
        await asyncio.sleep(0)
