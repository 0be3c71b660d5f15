"""CheckTaskId: before a task is submitted, its task_id is free or already this task's.

The task_id namespace is global (one run per task_id, whoever sent it), so a submit naming
a task_id another task holds — another tenant's, or another file's — would only be
dead-lettered by the pipeline (DUPLICATE_TASK). The HTTP submit asks first and answers 409.
"Taken" is all it says: not whose, not in what state (docs/security.md, Existence and ids).
Resubmitting one's own task is a redelivery and passes.
"""

from __future__ import annotations

from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import ParseTaskCommand


class TaskIdTaken(LookupError):
    """The task_id is recorded for another task; the message says only that."""


class CheckTaskId:
    def __init__(self, uow_factory: UnitOfWorkFactory) -> None:
        self._uow_factory = uow_factory

    async def __call__(self, task: ParseTaskCommand) -> None:
        """TaskIdTaken when `task.task_id` belongs to a run of another tenant or file."""
        async with self._uow_factory() as uow:
            run = await uow.runs.get(task.task_id)
        if run is not None and not run.identity.same_file(task.identity):
            raise TaskIdTaken(f"task_id {task.task_id} is already taken")
