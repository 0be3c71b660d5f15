"""Reading parse runs and retrying a failed one (`ragline status`, `ragline retry`)."""

from ragline.application.runs.list_runs import ListRuns
from ragline.application.runs.retry_run import RetryRun, RunNotFound, RunNotRetryable
from ragline.application.runs.task_ids import CheckTaskId, TaskIdTaken

__all__ = ["CheckTaskId", "ListRuns", "RetryRun", "RunNotFound", "RunNotRetryable", "TaskIdTaken"]
