"""ListRuns: one run by task_id, or the newest runs."""

from __future__ import annotations

from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import ParseRun


class ListRuns:
    def __init__(self, uow_factory: UnitOfWorkFactory) -> None:
        self._uow_factory = uow_factory

    async def __call__(self, task_id: str | None, limit: int = 20) -> list[ParseRun]:
        async with self._uow_factory() as uow:
            if task_id is not None:
                run = await uow.runs.get(task_id)
                return [run] if run is not None else []
            return list(await uow.runs.list_recent(limit))
