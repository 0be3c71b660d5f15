"""In-memory parsed logs: one row per task_id, locked by the writer."""

from __future__ import annotations

from datetime import datetime

import attrs

from ragline.application.ports.repositories.errors import (
    DuplicateTaskId,
    PersistenceError,
)
from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.application.tasks import StoredTask
from ragline.domain.parse_run import (
    MarkdownLocation,
)
from tests.fakes.repositories.base import FakeRepository, utc


class FakeParsedLogs(FakeRepository):
    async def add(
        self,
        task_id: str,
        task: StoredTask,
        created_at: datetime,
        retry_of_task_id: str | None = None,
        source: MarkdownLocation | None = None,
    ) -> ParsedLog:
        await self.check("parsed_logs.add")
        await self.uow.lock(("log", task_id))
        if task_id in self.uow.pending_logs or task_id in self.db.parsed_logs:
            raise DuplicateTaskId(task_id)
        row = ParsedLog(
            next(self.db._log_ids),
            task_id,
            task,
            utc(created_at),
            retry_of_task_id,
            source=source,
        )
        self.uow.pending_logs[task_id] = row
        return row

    async def get(self, task_id: str) -> ParsedLog | None:
        await self.check("parsed_logs.get")
        return self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)

    async def set_parsed_location(self, task_id: str, bucket: str, object_key: str) -> None:
        await self.check("parsed_logs.set_parsed_location")
        await self.uow.lock(("log", task_id))
        row = self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)
        if row is None:
            raise PersistenceError(f"no parsed log for {task_id}")
        self.uow.pending_logs[task_id] = attrs.evolve(
            row, parsed_bucket=bucket, parsed_object_key=object_key
        )

    async def set_parse_outcome(
        self, task_id: str, backend: str, warnings: tuple[str, ...]
    ) -> None:
        await self.check("parsed_logs.set_parse_outcome")
        await self.uow.lock(("log", task_id))
        row = self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)
        if row is None:
            raise PersistenceError(f"no parsed log for {task_id}")
        self.uow.pending_logs[task_id] = attrs.evolve(
            row, parse_backend=backend[:64], parse_warnings=tuple(warnings)
        )
