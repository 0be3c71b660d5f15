"""SubmitTask and PublishTaskMessage: put a parse task on the task topic.

`SubmitTask` takes a decoded, well-typed task (the caller's edge validated it) and answers
with its task_id; `PublishTaskMessage` puts a body on the topic exactly as given, as the
admin side would — the worker then decides what it is, as it does for any producer.
"""

from __future__ import annotations

from ragline.application.ports.messaging import Publisher
from ragline.application.ports.wire_format import WireFormat
from ragline.application.tasks import ParseTaskCommand


class SubmitTask:
    def __init__(self, tasks: Publisher, wire: WireFormat) -> None:
        self._tasks = tasks
        self._wire = wire

    async def __call__(self, task: ParseTaskCommand) -> str:
        await self._tasks.publish(self._wire.encode_task(task), task.routing_key)
        return task.task_id


class PublishTaskMessage:
    def __init__(self, tasks: Publisher) -> None:
        self._tasks = tasks

    async def __call__(self, body: bytes, routing_key: str) -> None:
        await self._tasks.publish(body, routing_key)
