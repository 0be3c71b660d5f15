"""PipelineMetrics port: what the pipeline (and search) reports as it works (Prometheus in
production).

Calls are cheap and never fail the work; `NO_METRICS` reports nothing (tests, tools).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class PipelineMetrics(Protocol):
    def run_finished(self, status: str, failure_code: str | None) -> None:
        """A run became terminal (SUCCESS, or FAILED with its code)."""
        ...

    def stage_finished(self, stage: str, status: str, seconds: float) -> None:
        """A stage ended (SUCCESS or FAILED) after `seconds` of work."""
        ...

    def task_started(self) -> None:
        """A delivery is being handled (tasks in flight + 1)."""
        ...

    def task_ended(self) -> None:
        """Its handling ended, whatever the outcome (tasks in flight - 1)."""
        ...

    def redelivered(self, outcome: str) -> None:
        """A known task_id came again (`resent` or `interrupted`)."""
        ...

    def task_held(self, dependency: str) -> None:
        """A delivery was left on the broker because `dependency` did not answer."""
        ...

    def tasks_redriven(self, count: int) -> None:
        """`count` task dead letters were published to the task topic again."""
        ...

    def texts_embedded(self, count: int, seconds: float) -> None:
        """The dense model embedded `count` texts in `seconds`."""
        ...

    def results_relayed(self, due: int, sent: int, retried: int, dead: int) -> None:
        """One outbox relay pass: rows due, published, put back, dead."""
        ...

    def outbox_rows(self, counts: Mapping[str, int]) -> None:
        """How many outbox rows each status has now (PENDING: owed, DEAD: given up)."""
        ...

    def search_answered(self, outcome: str, missing: Sequence[str]) -> None:
        """One search query: `complete`, `degraded` (answered without the `missing`
        retrievers, which failed) or `unavailable` (none answered)."""
        ...

    def chunks_reembedded(self, count: int) -> None:
        """A re-embedding's copy batch of `count` chunks was written into its shadow."""
        ...

    def reembedding_entered(self, status: str) -> None:
        """A re-embedding moved to `status` (PLANNED when planned, then COPYING, READY, ...)."""
        ...

    def copy_batch_taken_over(self) -> None:
        """A copy batch was claimed again after its holder's lease ran out (a dead worker)."""
        ...


class NoMetrics:
    def run_finished(self, status: str, failure_code: str | None) -> None:
        return None

    def stage_finished(self, stage: str, status: str, seconds: float) -> None:
        return None

    def task_started(self) -> None:
        return None

    def task_ended(self) -> None:
        return None

    def redelivered(self, outcome: str) -> None:
        return None

    def task_held(self, dependency: str) -> None:
        return None

    def tasks_redriven(self, count: int) -> None:
        return None

    def texts_embedded(self, count: int, seconds: float) -> None:
        return None

    def results_relayed(self, due: int, sent: int, retried: int, dead: int) -> None:
        return None

    def outbox_rows(self, counts: Mapping[str, int]) -> None:
        return None

    def search_answered(self, outcome: str, missing: Sequence[str]) -> None:
        return None

    def chunks_reembedded(self, count: int) -> None:
        return None

    def reembedding_entered(self, status: str) -> None:
        return None

    def copy_batch_taken_over(self) -> None:
        return None


NO_METRICS: PipelineMetrics = NoMetrics()
