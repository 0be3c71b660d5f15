"""In-memory parse runs: version compare-and-set on save, supersede by rowcount,
heartbeats outside the aggregate. Remembers the runs added or saved, whose events the
unit of work collects on commit."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from ragline.application.ports.repositories.errors import (
    ConcurrentUpdate,
    DuplicateTaskId,
)
from ragline.application.ports.repositories.runs import RunPage, RunQuery
from ragline.domain.parse_run import (
    ParseRun,
    PipelineStatus,
)
from tests.fakes.repositories.base import FakeRepository, snapshot, stored, utc

_UNFINISHED = (PipelineStatus.PENDING, PipelineStatus.PROCESSING)


class FakeRuns(FakeRepository):
    def _current(self, task_id: str) -> ParseRun | None:
        return self.uow.pending_runs.get(task_id) or self.db.runs.get(task_id)

    async def add(self, run: ParseRun) -> None:
        await self.check("runs.add")
        await self.uow.lock(("run", run.task_id))
        row = stored(run)
        if self._current(run.task_id) is not None:
            raise DuplicateTaskId(run.task_id)
        self.uow.pending_runs[run.task_id] = row
        self.db.run_order.setdefault(run.task_id, len(self.db.run_order))
        self.uow.saw(run)

    async def get(self, task_id: str) -> ParseRun | None:
        await self.check("runs.get")
        current = self._current(task_id)
        return snapshot(current) if current is not None else None

    async def save(self, run: ParseRun, expected_version: int) -> None:
        await self.check("runs.save")
        if run.version <= expected_version:
            raise ValueError(
                f"run {run.task_id} version {run.version} is not newer than {expected_version}"
            )
        row = stored(run)
        await self.uow.lock(("run", run.task_id))
        current = self._current(run.task_id)
        if current is None or current.version != expected_version:
            found = None if current is None else current.version
            raise ConcurrentUpdate(
                f"run {run.task_id}: expected version {expected_version}, found {found}"
            )
        self.uow.pending_runs[run.task_id] = row
        self.uow.saw(run)

    async def mark_superseded(self, task_id: str, by_task_id: str) -> bool:
        await self.check("runs.mark_superseded")
        await self.uow.lock(("run", task_id))
        current = self._current(task_id)
        if (
            current is None
            or current.superseded_by_task_id is not None
            or current.pipeline_status is not PipelineStatus.FAILED
        ):
            return False
        marked = snapshot(current)
        marked.superseded_by_task_id = by_task_id
        marked.version += 1
        self.uow.pending_runs[task_id] = marked
        return True

    def _sign_of_life(self, run: ParseRun) -> datetime:
        beat = self.uow.pending_heartbeats.get(run.task_id) or self.db.heartbeats.get(run.task_id)
        return beat if beat is not None else run.created_at

    async def _touch(self, task_id: str, at: datetime, before: datetime | None) -> bool:
        at = utc(at)
        await self.uow.lock(("run", task_id))
        current = self._current(task_id)
        if current is None or current.pipeline_status not in _UNFINISHED:
            return False
        if before is not None and not self._sign_of_life(current) < utc(before):
            return False
        self.uow.pending_heartbeats[task_id] = at
        return True

    async def heartbeat(self, task_id: str, at: datetime) -> bool:
        await self.check("runs.heartbeat")
        return await self._touch(task_id, at, None)

    async def list_stale(self, before: datetime, limit: int = 100) -> list[str]:
        await self.check("runs.list_stale")
        before = utc(before)
        stale = [
            r
            for r in self._all()
            if r.pipeline_status in _UNFINISHED and self._sign_of_life(r) < before
        ]
        stale.sort(key=lambda r: (self._sign_of_life(r), self.db.run_order.get(r.task_id, 0)))
        return [r.task_id for r in stale[:limit]]

    async def claim_stale(self, task_id: str, before: datetime, at: datetime) -> bool:
        await self.check("runs.claim_stale")
        return await self._touch(task_id, at, before)

    def _all(self) -> list[ParseRun]:
        merged = dict(self.db.runs) | self.uow.pending_runs
        return [snapshot(r) for r in merged.values()]

    async def list_unfinished(self, limit: int = 100) -> list[ParseRun]:
        await self.check("runs.list_unfinished")
        return [r for r in self._all() if not r.is_terminal][:limit]

    async def list_recent(self, limit: int = 50) -> list[ParseRun]:
        await self.check("runs.list_recent")
        return sorted(self._all(), key=lambda r: r.created_at, reverse=True)[:limit]

    def _newest_first(self, runs: Iterable[ParseRun]) -> list[ParseRun]:
        order = self.db.run_order
        return sorted(runs, key=lambda r: (r.created_at, order.get(r.task_id, 0)), reverse=True)

    async def list_page(self, query: RunQuery, *, offset: int = 0, limit: int = 50) -> RunPage:
        await self.check("runs.list_page")
        matching = [
            r
            for r in self._all()
            if (query.user_id is None or r.identity.user_id == query.user_id)
            and (query.dataset_id is None or r.identity.dataset_id == query.dataset_id)
            and (query.status is None or r.pipeline_status is query.status)
            and (query.doc_id is None or r.identity.original_file_id == query.doc_id)
        ]
        return RunPage(self._newest_first(matching)[offset : offset + limit], len(matching))
