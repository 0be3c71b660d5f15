"""RetryRun: publish a manual retry of a FAILED run and wait for its result (invariant 6 of
docs/design/0002-run-state-machine.md).

The retry is the run's own stored task again (`ParseTaskCommand.retry_of`), so it names
the same file and tenant; its references are checked against who asks, as any submitted
task's are (a task stored before a rule tightened may name what a tenant may no longer:
ReferenceRefused, nothing published). The pipeline decides whether it may run and which
stages it inherits.

The answer is read from the retry's run in the database, never from the broker: a reader
queue on the result topic would make every result routable while it exists (an unbound
business queue would then not make a result DEAD), and waiting for a publish ties the
answer to the relay's backoff. The retry is ragline's own work (`TaskIssuer.RAGLINE`), so
no result is published for it at all (docs/wire-contracts.md).

A tenant may retry only its own runs: another tenant's run is not found, with exactly the
answer a task_id that does not exist gets (docs/security.md, Existence and ids).
"""

from __future__ import annotations

import asyncio

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.pipeline.results import build_result
from ragline.application.ports.messaging import Publisher
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.wire_format import WireFormat
from ragline.application.tasks import ParseTaskCommand, TaskIssuer, TaskResult, UnreadableTask


class RunNotRetryable(LookupError):
    """No such run, or it cannot be retried from here (already retried, no valid task)."""


class RunNotFound(RunNotRetryable):
    """No run with this task_id that the caller may see (none at all, or another tenant's:
    the message is the same)."""


class RetryRun:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        tasks: Publisher,
        wire: WireFormat,
        references: ReferencePolicy,
        *,
        language: str = "zh",
        poll_seconds: float = 0.2,
    ) -> None:
        self._references = references
        self._uow_factory = uow_factory
        self._tasks = tasks
        self._wire = wire
        self._language = language
        self._poll_seconds = poll_seconds

    async def retry_task(self, caller: Caller, task_id: str) -> ParseTaskCommand:
        """The retry task of run `task_id` (RunNotFound when `caller` sees no such run,
        RunNotRetryable when there is none to build; ReferenceRefused when it names what
        `caller` may not)."""
        async with self._uow_factory() as uow:
            run = await uow.runs.get(task_id)
            log_row = await uow.parsed_logs.get(task_id)
        if run is None or log_row is None or not caller.may_act_for(run.identity.user_id):
            raise RunNotFound(f"no run with task_id {task_id}")
        if run.superseded_by_task_id is not None:
            raise RunNotRetryable(f"{task_id} was already retried by {run.superseded_by_task_id}")
        task = self._wire.decode_task(log_row.payload_json.encode("utf-8"))
        if isinstance(task, UnreadableTask):
            raise RunNotRetryable(f"{task_id} has no valid task to retry ({task.reason})")
        retry = task.retry_of(task_id).issued(TaskIssuer.RAGLINE)
        self._references.check_task(caller, retry)
        async with self._uow_factory() as uow:
            taken = await uow.runs.get(retry.task_id) is not None
        if taken:  # its message would be dead-lettered (DUPLICATE_TASK), never answered
            raise RunNotRetryable(f"the retry's task_id {retry.task_id} is already taken")
        return retry

    async def __call__(
        self, caller: Caller, task_id: str, timeout_seconds: float = 3600
    ) -> TaskResult:
        """The retry's terminal result (TimeoutError when it has none in `timeout_seconds`;
        the retry goes on)."""
        retry = await self.retry_task(caller, task_id)
        await self._tasks.publish(self._wire.encode_task(retry), retry.routing_key)
        return await asyncio.wait_for(self._outcome(retry.task_id), timeout_seconds)

    async def _outcome(self, task_id: str) -> TaskResult:
        while True:
            async with self._uow_factory() as uow:
                run = await uow.runs.get(task_id)
                parsed = await uow.parsed_logs.get(task_id) if run is not None else None
            if run is not None and run.is_terminal:
                return build_result(run, parsed.id if parsed else 0, self._language)
            await asyncio.sleep(self._poll_seconds)
