"""The parse-run state machine: resumable stages (one ordered declaration, `Stage`), failure
codes, retry and chunk status.

Pure: stdlib + attrs, times and ids passed in. See docs/state-machine.md.
"""

from ragline.domain.parse_run.chunk_status import (
    BEGIN_INDEXING,
    CHUNK_STATUS_MOVES,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
    ChunkStatusMove,
    needs_indexing,
)
from ragline.domain.parse_run.errors import (
    DomainError,
    IllegalChunkStatusMove,
    IllegalStageTransition,
    MarkdownCoordinatesRequired,
    NotAnInheritedStage,
    NotTerminal,
    RejectAfterStart,
    RetryNotAllowed,
    RunAlreadyTerminal,
    StageOrderViolation,
)
from ragline.domain.parse_run.events import (
    RunEvent,
    RunFailed,
    RunSucceeded,
    TerminalResult,
    terminal_result,
)
from ragline.domain.parse_run.failure import (
    CODE_INFO,
    MAX_FAILURE_REASON_LENGTH,
    TRUNCATION_MARK,
    CodeInfo,
    FailureCode,
    FailureReason,
)
from ragline.domain.parse_run.retry import RetryRefusal, retry_refusal
from ragline.domain.parse_run.run import MarkdownLocation, ParseRun, TaskIdentity
from ragline.domain.parse_run.stage import (
    FIRST_STAGE,
    LAST_STAGE,
    STAGE_ORDER,
    FailurePoint,
    PipelineStatus,
    Stage,
    StageName,
    StageState,
    StageStatus,
    first_unfinished,
    fresh_stages,
)

__all__ = [
    "BEGIN_INDEXING",
    "CHUNK_STATUS_MOVES",
    "CODE_INFO",
    "COMPLETE",
    "FAIL",
    "FIRST_STAGE",
    "LAST_STAGE",
    "MAX_FAILURE_REASON_LENGTH",
    "STAGE_ORDER",
    "TRUNCATION_MARK",
    "ChunkIndexStatus",
    "ChunkStatusMove",
    "CodeInfo",
    "DomainError",
    "FailureCode",
    "FailurePoint",
    "FailureReason",
    "IllegalChunkStatusMove",
    "IllegalStageTransition",
    "MarkdownCoordinatesRequired",
    "MarkdownLocation",
    "NotAnInheritedStage",
    "NotTerminal",
    "ParseRun",
    "PipelineStatus",
    "RejectAfterStart",
    "RetryNotAllowed",
    "RetryRefusal",
    "RunAlreadyTerminal",
    "RunEvent",
    "RunFailed",
    "RunSucceeded",
    "Stage",
    "StageName",
    "StageOrderViolation",
    "StageState",
    "StageStatus",
    "TaskIdentity",
    "TerminalResult",
    "first_unfinished",
    "fresh_stages",
    "needs_indexing",
    "retry_refusal",
    "terminal_result",
]
