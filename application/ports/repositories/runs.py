"""Parse runs: the ParseRun aggregate, saved whole under a version compare-and-set."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import attrs

from ragline.domain.parse_run import ParseRun, PipelineStatus


class ParseRunRepository(Protocol):
    async def add(self, run: ParseRun) -> None:
        """Insert a new run; DuplicateTaskId when its task_id exists."""
        ...

    async def get(self, task_id: str) -> ParseRun | None:
        """The stored run, rebuilt as the aggregate (no pending events)."""
        ...

    async def save(self, run: ParseRun, expected_version: int) -> None:
        """Write the run's whole state: `UPDATE ... WHERE task_id=:id AND version=:expected`.

        ConcurrentUpdate when the rowcount is not 1. `run.version` is the new version and
        must be greater than `expected_version` (ValueError otherwise): every domain command
        bumps it, so a save always changes the row.
        """
        ...

    async def mark_superseded(self, task_id: str, by_task_id: str) -> bool:
        """`UPDATE ... SET superseded_by_task_id=:by WHERE task_id=:id AND
        superseded_by_task_id IS NULL AND pipeline_status='FAILED'`; True iff rowcount == 1.

        The rowcount arbitrates concurrent retries of the same run (invariant 6 of
        docs/design/0002-run-state-machine.md). Also bumps the stored version so a stale aggregate
        cannot overwrite the mark.
        """
        ...

    async def list_unfinished(self, limit: int = 100) -> list[ParseRun]:
        """Runs still PENDING or PROCESSING (interrupted runs waiting for a redelivery)."""
        ...

    async def heartbeat(self, task_id: str, at: datetime) -> bool:
        """`UPDATE ... SET heartbeat_at=:at WHERE task_id=:id AND <unfinished>`: the worker
        running the run says it still is. True iff rowcount == 1 (False: the run ended, or
        a sweep converged it). Outside the aggregate: `save` never writes it, no version."""
        ...

    async def list_stale(self, before: datetime, limit: int = 100) -> list[str]:
        """task_ids of unfinished runs whose heartbeat (or, without one, created_at) is
        older than `before`, oldest first."""
        ...

    async def claim_stale(self, task_id: str, before: datetime, at: datetime) -> bool:
        """The sweep's compare-and-set: `SET heartbeat_at=:at WHERE task_id=:id AND
        <unfinished> AND coalesce(heartbeat_at, created_at) < :before`; True iff rowcount
        == 1. A worker's heartbeat since the listing makes it False; the row stays locked
        by this unit of work until it commits, so the sweep converges it alone."""
        ...

    async def list_recent(self, limit: int = 50) -> list[ParseRun]:
        """Newest runs first, for `ragline status`."""
        ...

    async def list_page(self, query: RunQuery, *, offset: int = 0, limit: int = 50) -> RunPage:
        """The runs matching `query`, newest first (created_at, then insertion order), from
        `offset`, at most `limit`; `total` counts every match. Runs of other users or
        datasets are never returned when the query names one."""
        ...


@attrs.frozen
class RunQuery:
    """Filters of `list_page`; None matches everything."""

    user_id: str | None = None
    dataset_id: str | None = None
    status: PipelineStatus | None = None
    doc_id: str | None = None  # the runs' original_file_id


@attrs.frozen
class RunPage:
    runs: list[ParseRun]
    total: int
