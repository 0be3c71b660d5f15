"""The six pipeline stages, their statuses, and where a run can fail.

Order matters: a stage may start only when every earlier stage succeeded (invariant 1 of
docs/design/0002-run-state-machine.md), and the recovery point of a failed run is the first stage
that has not succeeded.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime

import attrs


class Stage(enum.Enum):
    """Pipeline stages in execution order (docs/design/0001-pipeline-contract.md)."""

    CLEANING = "CLEANING"
    CHUNKING = "CHUNKING"
    VECTORIZING = "VECTORIZING"
    PRETOKENIZE = "PRETOKENIZE"
    KEYWORD_INDEXING = "KEYWORD_INDEXING"
    SPARSE_VECTORIZING = "SPARSE_VECTORIZING"

    @property
    def position(self) -> int:
        """Zero-based place in STAGE_ORDER."""
        return STAGE_ORDER.index(self)

    @property
    def earlier(self) -> tuple[Stage, ...]:
        """Stages that must all be SUCCESS before this one starts."""
        return STAGE_ORDER[: self.position]

    @property
    def is_last(self) -> bool:
        """Only the last stage's success (or inherited skip) makes the pipeline SUCCESS."""
        return self is STAGE_ORDER[-1]


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)
FIRST_STAGE: Stage = STAGE_ORDER[0]
LAST_STAGE: Stage = STAGE_ORDER[-1]


class StageStatus(enum.Enum):
    """Status of one stage of one run; survives redelivery (invariant 4 of
    docs/design/0002-run-state-machine.md)."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


class PipelineStatus(enum.Enum):
    """Whole-run status; the single authority the business system reads."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        """SUCCESS and FAILED are final: no automatic retry inside a run (invariant 3 of
        docs/design/0002-run-state-machine.md)."""
        return self in (PipelineStatus.SUCCESS, PipelineStatus.FAILED)


class FailurePoint(enum.Enum):
    """Where a run failed: one of the six stages, or a check made before any stage ran."""

    CLEANING = "CLEANING"
    CHUNKING = "CHUNKING"
    VECTORIZING = "VECTORIZING"
    PRETOKENIZE = "PRETOKENIZE"
    KEYWORD_INDEXING = "KEYWORD_INDEXING"
    SPARSE_VECTORIZING = "SPARSE_VECTORIZING"
    TASK_VALIDATION = "TASK_VALIDATION"
    RETRY_VALIDATION = "RETRY_VALIDATION"

    @classmethod
    def of(cls, stage: Stage) -> FailurePoint:
        """The failure point naming a stage."""
        return cls(stage.value)

    @property
    def stage(self) -> Stage | None:
        """The stage this point names, or None for the validation points."""
        try:
            return Stage(self.value)
        except ValueError:
            return None


@attrs.frozen
class StageState:
    """One stage of one run. `inherited` marks a SUCCESS copied from the run it retries."""

    status: StageStatus = StageStatus.PENDING
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_ms: int | None = None
    inherited: bool = False


def fresh_stages() -> dict[Stage, StageState]:
    """Six PENDING stages, for a new run."""
    return {stage: StageState() for stage in STAGE_ORDER}


def first_unfinished(stages: Mapping[Stage, StageState]) -> Stage | None:
    """The first stage that is not SUCCESS: where a failed run recovers from."""
    for stage in STAGE_ORDER:
        if stages[stage].status is not StageStatus.SUCCESS:
            return stage
    return None
