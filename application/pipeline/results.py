"""The terminal ParseResult of a run, and putting it in the outbox (SPEC §4.5, §5).

The outbox row is written in the same unit of work as the terminal state, so "stored
terminal state" and "result will be published" are one commit.
"""

from __future__ import annotations

from datetime import datetime

from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.contracts.wire import ParseResult, TaskStatus, encode_parse_result
from ragline.domain.parse_run import ParseRun, terminal_result


def wire_id(value: str) -> int:
    """Ids travel as ints on the wire and as strings in the domain; an id that was never a
    number (a rejected message) is reported as 0."""
    try:
        return int(value)
    except ValueError:
        return 0


def build_result(run: ParseRun, parsed_log_id: int, language: str = "zh") -> ParseResult:
    """The wire result of a terminal run (NotTerminal for a run still going)."""
    fields = terminal_result(run, language)
    identity = run.identity
    return ParseResult(
        task_id=fields.task_id,
        original_file_id=wire_id(identity.original_file_id),
        document_parsed_log_id=parsed_log_id,
        dataset_id=wire_id(identity.dataset_id),
        user_id=wire_id(identity.user_id),
        task_status=TaskStatus(fields.task_status),
        parse_finished_at=fields.finished_at,
        failure_reason=fields.failure_reason,
        user_message=fields.user_message,
    )


async def put_result(
    uow: UnitOfWork,
    run: ParseRun,
    parsed_log_id: int,
    *,
    topic: str,
    language: str,
    at: datetime,
) -> ParseResult:
    """Write the run's result into the outbox of `uow` (one row per task_id)."""
    result = build_result(run, parsed_log_id, language)
    await uow.outbox.put(run.task_id, topic, result.routing_key, encode_parse_result(result), at)
    return result
