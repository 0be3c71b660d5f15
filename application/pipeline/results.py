"""The terminal result of a run, and putting it in the outbox (invariant 5 of
docs/design/0002-run-state-machine.md; docs/design/0005-wire-contract.md).

One mechanism says a result is owed: the aggregate records a terminal event exactly when a
run becomes terminal, and `queue_owed_results` turns each pending event into the outbox
row, in the same unit of work that stores the terminal state. So "stored terminal state"
and "result will be published" are one commit, wherever the run ended. The one other case
is a redelivered task whose run already ended: `resend_result` queues its result again
(no new event: the run did not change).

Only the producer's runs are owed a result: a run ragline issued itself (an operator's
retry, a re-index: `TaskIssuer.RAGLINE` in its stored task) answers nobody on the result
topic, since the producer never issued that task_id; its outcome is in the run tables
(docs/wire-contracts.md).
"""

from __future__ import annotations

from datetime import datetime

from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.secrets import masked
from ragline.application.tasks import ParseTaskCommand, TaskResult, TaskStatus
from ragline.domain.parse_run import ParseRun, terminal_result


def wire_id(value: str) -> int:
    """A run's id as the wire's integer again. Every run is opened from a decoded task
    (`ParseTaskCommand.identity`, `UnreadableTask.identity`), so its ids are decimal text
    and this is exact; anything else raises ValueError rather than being sent as another
    number (docs/wire-contracts.md, Ids inside)."""
    return int(value)


def build_result(run: ParseRun, parsed_log_id: int, language: str = "zh") -> TaskResult:
    """The result of a terminal run (NotTerminal for a run still going)."""
    fields = terminal_result(run, language)
    identity = run.identity
    return TaskResult(
        task_id=fields.task_id,
        original_file_id=wire_id(identity.original_file_id),
        document_parsed_log_id=parsed_log_id,
        dataset_id=wire_id(identity.dataset_id),
        user_id=wire_id(identity.user_id),
        task_status=TaskStatus(fields.task_status),
        parse_finished_at=fields.finished_at,
        failure_reason=None if fields.failure_reason is None else masked(fields.failure_reason),
        user_message=fields.user_message,
    )


class ResultOutbox:
    """Writes result messages into the outbox of a unit of work (one row per task_id)."""

    def __init__(
        self,
        *,
        topic: str,
        language: str,
        metrics: PipelineMetrics = NO_METRICS,
    ) -> None:
        self.topic = topic
        self.language = language
        self.metrics = metrics

    async def queue_owed_results(
        self, uow: UnitOfWork, run: ParseRun, parsed_log_id: int, at: datetime
    ) -> None:
        """The outbox row of the run's pending terminal event, if it has one. The caller
        commits; the unit of work then takes the run's events (they are not sent twice)."""
        if run.pending_events:
            await self._put(uow, run, parsed_log_id, at)
            reason = run.failure_reason
            code = reason.code.value if reason is not None else None
            self.metrics.run_finished(run.pipeline_status.value, code)

    async def resend_result(
        self, uow: UnitOfWork, run: ParseRun, parsed_log_id: int, at: datetime
    ) -> None:
        """A redelivered task whose run is already terminal: its result once more."""
        await self._put(uow, run, parsed_log_id, at)

    async def _put(self, uow: UnitOfWork, run: ParseRun, parsed_log_id: int, at: datetime) -> None:
        if not await self._owed_to_producer(uow, run.task_id):
            return
        result = build_result(run, parsed_log_id, self.language)
        await uow.outbox.put(result, self.topic, at)

    async def _owed_to_producer(self, uow: UnitOfWork, task_id: str) -> bool:
        """The stored task says who issued it; a rejected body (no valid task) came from
        a producer."""
        stored = await uow.parsed_logs.get(task_id)
        if stored is None:
            return True
        return not isinstance(stored.task, ParseTaskCommand) or stored.task.owes_result
