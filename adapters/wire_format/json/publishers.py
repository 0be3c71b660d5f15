"""The outbound edge: tasks and results written as wire messages onto a bytes publisher."""

from __future__ import annotations

from collections.abc import Mapping

from ragline.adapters.wire_format.json.format import result_message, task_message
from ragline.application.ports.messaging import Publisher
from ragline.application.tasks import ParseTaskCommand, TaskResult
from ragline.contracts import wire


class JsonTaskPublisher:
    """TaskPublisher: the ParseTask JSON of each task, routed by file type."""

    def __init__(self, publisher: Publisher) -> None:
        self.publisher = publisher

    async def publish(self, task: ParseTaskCommand) -> None:
        body = wire.encode_parse_task(task_message(task))
        await self.publisher.publish(body, task.routing_key)


class JsonResultPublisher:
    """ResultPublisher: the ParseResult JSON of each result, routed by task_id."""

    def __init__(self, publisher: Publisher) -> None:
        self.publisher = publisher

    async def publish(self, result: TaskResult, headers: Mapping[str, str] | None = None) -> None:
        body = wire.encode_parse_result(result_message(result))
        await self.publisher.publish(body, result.routing_key, headers)
