"""Whether a failed run may be retried (invariant 6 of docs/design/0002-run-state-machine.md), as a
pure check returning a reason.

The check is what the persistence layer's supersede compare-and-set protects: two retries
may both pass it on the same snapshot, and the rowcount of
`UPDATE ... SET superseded_by_task_id=:new WHERE ... superseded_by_task_id IS NULL`
decides the single winner; the loser gets `RetryRefusal.CONCURRENT_SUPERSEDE`.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from ragline.domain.parse_run.stage import FIRST_STAGE, PipelineStatus, first_unfinished

if TYPE_CHECKING:
    from ragline.domain.parse_run.run import ParseRun


class RetryRefusal(enum.Enum):
    """Why a retry is refused; the value is the detail of `RETRY_VALIDATION_FAILED:`."""

    PREVIOUS_NOT_FOUND = "previous_not_found"
    PREVIOUS_NOT_FAILED = "previous_not_failed"
    ALREADY_SUPERSEDED = "already_superseded"
    MARKDOWN_MISSING = "markdown_missing"
    SAME_TASK_ID = "same_task_id"
    CONCURRENT_SUPERSEDE = "concurrent_supersede"


def retry_refusal(previous: ParseRun | None, new_task_id: str) -> RetryRefusal | None:
    """None when `new_task_id` may retry `previous`, else the first rule it breaks."""
    if previous is None:
        return RetryRefusal.PREVIOUS_NOT_FOUND
    if previous.task_id == new_task_id:
        return RetryRefusal.SAME_TASK_ID
    if previous.pipeline_status is not PipelineStatus.FAILED:
        return RetryRefusal.PREVIOUS_NOT_FAILED
    if previous.superseded_by_task_id is not None:
        return RetryRefusal.ALREADY_SUPERSEDED
    if first_unfinished(previous.stages) is not FIRST_STAGE and previous.markdown is None:
        return RetryRefusal.MARKDOWN_MISSING
    return None
