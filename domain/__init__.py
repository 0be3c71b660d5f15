"""ragline.domain: the pure model (stdlib + attrs only).

The parse-run state machine lives in `ragline.domain.parse_run`; its main names are
re-exported here for convenience.
"""

from ragline.domain.parse_run import (
    ChunkIndexStatus,
    DomainError,
    FailureCode,
    FailurePoint,
    FailureReason,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
    Stage,
    StageState,
    StageStatus,
    TaskIdentity,
)

__all__ = [
    "ChunkIndexStatus",
    "DomainError",
    "FailureCode",
    "FailurePoint",
    "FailureReason",
    "MarkdownLocation",
    "ParseRun",
    "PipelineStatus",
    "Stage",
    "StageState",
    "StageStatus",
    "TaskIdentity",
]
