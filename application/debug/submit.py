"""SubmitTask and PublishTaskMessage: put a parse task on the task topic.

`SubmitTask` takes a decoded, well-typed task (the caller's edge validated it) and the
caller, checks every reference the task names against who the caller is (ReferenceRefused:
nothing is published) and that its task_id is free or already this task's (TaskIdTaken), and
answers with its task_id; `PublishTaskMessage` puts a body on the
topic exactly as given, as the admin side would — the worker then decides what it is, as it
does for any producer (its own reference check included).
"""

from __future__ import annotations

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.ports.messaging import Publisher
from ragline.application.ports.task_messages import TaskPublisher
from ragline.application.runs.task_ids import CheckTaskId
from ragline.application.tasks import ParseTaskCommand


class SubmitTask:
    def __init__(
        self,
        tasks: TaskPublisher,
        references: ReferencePolicy,
        task_ids: CheckTaskId,
    ) -> None:
        self._tasks = tasks
        self._references = references
        self._task_ids = task_ids

    async def __call__(self, caller: Caller, task: ParseTaskCommand) -> str:
        self._references.check_task(caller, task)
        await self._task_ids(task)
        await self._tasks.publish(task)
        return task.task_id


class PublishTaskMessage:
    """The body goes out unchanged. The broker's check treats every message as the
    service's, so a caller that is not the service (the default user of a server without
    tokens) has the references of a readable body checked here first; an unreadable body
    names nothing the worker would use (it is rejected there)."""

    def __init__(self, tasks: Publisher, references: ReferencePolicy) -> None:
        self._tasks = tasks
        self._references = references

    async def __call__(
        self, caller: Caller, body: bytes, routing_key: str, task: ParseTaskCommand | None
    ) -> None:
        """`task` is the body as the edge decoded it (None: not a valid task)."""
        if not caller.is_service and task is not None:
            self._references.check_task(caller, task)
        await self._tasks.publish(body, routing_key)
