"""The application's own view of the messages exchanged with the business system.

A message is decoded once, at the driving adapter that received it, into these plain values;
use cases, stages and validation never see the wire format (`ragline.contracts.wire`).
"""

from ragline.application.tasks.parse_task import (
    ParseTaskCommand,
    TaskIssuer,
    TriggerMode,
    UnreadableTask,
    body_text,
    next_retry_task_id,
)
from ragline.application.tasks.stored import RejectedBody, StoredTask, stored_task, task_record
from ragline.application.tasks.task_result import (
    TaskResult,
    TaskStatus,
    result_of_record,
    result_record,
)

__all__ = [
    "ParseTaskCommand",
    "RejectedBody",
    "StoredTask",
    "TaskIssuer",
    "TaskResult",
    "TaskStatus",
    "TriggerMode",
    "UnreadableTask",
    "body_text",
    "next_retry_task_id",
    "result_of_record",
    "result_record",
    "stored_task",
    "task_record",
]
