"""Reading parse runs and retrying a failed one (`ragline status`, `ragline retry`)."""

from ragline.application.runs.list_runs import ListRuns
from ragline.application.runs.retry_run import RetryRun, RunNotRetryable

__all__ = ["ListRuns", "RetryRun", "RunNotRetryable"]
