"""TaskResult: the one terminal notification of a run (invariant 5 of
docs/design/0002-run-state-machine.md; docs/design/0005-wire-contract.md), before encoding."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

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
