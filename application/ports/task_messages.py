"""Outbound task and result messages, in the application's values.

The application hands a task or a result over as it is; the adapter behind these ports
writes the wire message and publishes it (`ragline.adapters.wire_format.json`, on a bytes
`Publisher` of the bus). So the wire format is written at the outbound edge only, as it is
read at the inbound one (docs/wire-contracts.md, One shape inside).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from ragline.application.tasks import ParseTaskCommand, TaskResult


class TaskPublisher(Protocol):
    """The task topic, for the work ragline issues (ingest, retry, re-index) and submits."""

    async def publish(self, task: ParseTaskCommand) -> None:
        """The ParseTask message of `task`, routed by its file type, durably accepted by
        the broker (MessageBusError otherwise)."""
        ...


class ResultPublisher(Protocol):
    """The result topic (or its dead letters), for the outbox relay."""

    async def publish(self, result: TaskResult, headers: Mapping[str, str] | None = None) -> None:
        """The ParseResult message of `result`, routed by its task_id (with `headers`,
        where given), durably accepted by the broker (MessageBusError otherwise)."""
        ...
