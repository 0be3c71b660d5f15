"""RetryRun: publish a manual retry of a FAILED run and wait for its result (SPEC §4.6).

The retry is the run's own stored task again (`ParseTaskCommand.retry_of`), so it names
the same file and tenant; its references are checked against who asks, as any submitted
task's are (a task stored before a rule tightened may name what a tenant may no longer:
ReferenceRefused, nothing published). The pipeline decides whether it may run and which
stages it inherits. The result is read from the result topic by a reader of this call's own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.ports.messaging import Publisher, TaskSource
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.wire_format import WireFormat
from ragline.application.tasks import ParseTaskCommand, TaskResult, UnreadableTask


class RunNotRetryable(LookupError):
    """No such run, or it cannot be retried from here (already retried, no valid task)."""


class RetryRun:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        tasks: Publisher,
        results: Callable[[], TaskSource],
        wire: WireFormat,
        references: ReferencePolicy,
    ) -> None:
        self._references = references
        self._uow_factory = uow_factory
        self._tasks = tasks
        self._results = results
        self._wire = wire

    async def retry_task(self, caller: Caller, task_id: str) -> ParseTaskCommand:
        """The retry task of run `task_id` (RunNotRetryable when there is none to build;
        ReferenceRefused when it names what `caller` may not)."""
        async with self._uow_factory() as uow:
            run = await uow.runs.get(task_id)
            log_row = await uow.parsed_logs.get(task_id)
        if run is None or log_row is None:
            raise RunNotRetryable(f"no run with task_id {task_id}")
        if run.superseded_by_task_id is not None:
            raise RunNotRetryable(f"{task_id} was already retried by {run.superseded_by_task_id}")
        task = self._wire.decode_task(log_row.payload_json.encode("utf-8"))
        if isinstance(task, UnreadableTask):
            raise RunNotRetryable(f"{task_id} has no valid task to retry ({task.reason})")
        retry = task.retry_of(task_id)
        self._references.check_task(caller, retry)
        return retry

    async def __call__(
        self, caller: Caller, task_id: str, timeout_seconds: float = 3600
    ) -> TaskResult:
        retry = await self.retry_task(caller, task_id)
        results = self._results()
        try:
            await self._tasks.publish(self._wire.encode_task(retry), retry.routing_key)
            return await asyncio.wait_for(self._result_for(results, retry.task_id), timeout_seconds)
        finally:
            await results.close()

    async def _result_for(self, results: TaskSource, task_id: str) -> TaskResult:
        async for delivery in results:
            await delivery.ack()
            with contextlib.suppress(ValueError):
                result = self._wire.decode_result(delivery.body)
                if result.task_id == task_id:
                    return result
        raise RunNotRetryable(f"the result topic closed before {task_id} answered")
