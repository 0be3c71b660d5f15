"""ListRuns: one run by task_id, the newest runs, or one filtered page of them."""

from __future__ import annotations

from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.application.ports.repositories.runs import RunPage, RunQuery
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import ParseRun

MAX_PAGE_SIZE = 200


class ListRuns:
    def __init__(self, uow_factory: UnitOfWorkFactory) -> None:
        self._uow_factory = uow_factory

    async def __call__(
        self,
        task_id: str | None,
        limit: int = 20,
        *,
        user_id: str | None = None,
        dataset_id: str | None = None,
    ) -> list[ParseRun]:
        """One run (when `task_id` is given and, if `user_id`/`dataset_id` are, it is in that
        scope), else the newest `limit` runs of that scope (every tenant's when none)."""
        async with self._uow_factory() as uow:
            if task_id is not None:
                run = await uow.runs.get(task_id)
                if run is None:
                    return []
                if user_id is not None and run.identity.user_id != user_id:
                    return []
                if dataset_id is not None and run.identity.dataset_id != dataset_id:
                    return []
                return [run]
            if user_id is None and dataset_id is None:
                return list(await uow.runs.list_recent(limit))
            found = await uow.runs.list_page(
                RunQuery(user_id=user_id, dataset_id=dataset_id), limit=limit
            )
            return found.runs

    async def page(self, query: RunQuery, page: int = 1, page_size: int = 50) -> RunPage:
        """Page `page` (from 1) of the runs matching `query`, newest first."""
        if page < 1 or not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page >= 1 and 1 <= page_size <= {MAX_PAGE_SIZE}")
        async with self._uow_factory() as uow:
            return await uow.runs.list_page(query, offset=(page - 1) * page_size, limit=page_size)

    async def parse_records(self, task_ids: list[str]) -> dict[str, ParsedLog]:
        """The parsed-log rows of these runs: the backend that really parsed, its warnings."""
        found: dict[str, ParsedLog] = {}
        async with self._uow_factory() as uow:
            for task_id in task_ids:
                row = await uow.parsed_logs.get(task_id)
                if row is not None:
                    found[task_id] = row
        return found
