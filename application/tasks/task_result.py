"""TaskResult: the one terminal notification of a run (invariant 5 of
docs/design/0002-run-state-machine.md; docs/design/0005-wire-contract.md), before encoding."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import attrs


class TaskStatus(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"


@attrs.frozen(kw_only=True)
class TaskResult:
    """Terminal state of one run. There is no partial success."""

    task_id: str
    original_file_id: int
    document_parsed_log_id: int
    dataset_id: int
    user_id: int
    task_status: TaskStatus
    parse_finished_at: datetime
    failure_reason: str | None = None
    user_message: str | None = None

    @property
    def routing_key(self) -> str:
        """Result messages are routed by task id."""
        return self.task_id


def result_record(result: TaskResult) -> dict[str, object]:
    """The plain record of a result, as the outbox keeps it until the relay publishes it
    (the time in ISO 8601 with its offset, the status as its value)."""
    record = attrs.asdict(result)
    record["task_status"] = result.task_status.value
    record["parse_finished_at"] = result.parse_finished_at.isoformat()
    return record


def result_of_record(record: object) -> TaskResult:
    """The result `result_record` wrote (or an older row of the same shape: the ParseResult
    message itself); ValueError when `record` is not one."""
    if not isinstance(record, dict):
        raise ValueError("a stored result is an object")
    fields: dict[str, Any] = {
        f.name: record[f.name] for f in attrs.fields(TaskResult) if f.name in record
    }
    try:
        fields["task_status"] = TaskStatus(fields["task_status"])
        fields["parse_finished_at"] = datetime.fromisoformat(str(fields["parse_finished_at"]))
        return TaskResult(**fields)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a stored result: {error}") from error
