"""The pipeline's stages — ONE ordered declaration — their statuses, and where a run can fail.

`Stage` below is the only list of stages: its order is the execution order, and each member
declares the facts every other place reads from it (the failure code of its unnamed
failures, the short label the CLI prints). `FailurePoint`, the stored run's stage columns,
the CLI's stage columns and the docs' stage lists all follow from it; adding a stage is one
member here (with its code in failure.py) plus its class in application/pipeline/stages/
(docs/pipeline.md walks it).

Order matters: a stage may start only when every earlier stage succeeded (invariant 1 of
docs/design/0002-run-state-machine.md), and the recovery point of a failed run is the first stage
that has not succeeded.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime

import attrs

from ragline.domain.parse_run.failure import FailureCode


class StageName(str):
    """A stage's stored name (the enum value: what columns, messages and APIs carry), with
    what the declaration says about the stage. Compares and hashes as the plain name."""

    label: str
    failure_code: FailureCode

    def __new__(cls, name: str, *, label: str, failure_code: FailureCode) -> StageName:
        made = super().__new__(cls, name)
        made.label = label
        made.failure_code = failure_code
        return made

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, object]]:
        """What copy and pickle rebuild it from (a dataclass holding one is `asdict`-able)."""
        return (str(self),), {"label": self.label, "failure_code": self.failure_code}


class Stage(enum.Enum):
    """Pipeline stages in execution order (docs/design/0001-pipeline-contract.md): the one
    declaration of the stages."""

    CLEANING = StageName("CLEANING", label="clean", failure_code=FailureCode.PARSE_ENGINE_FAILED)
    CHUNKING = StageName("CHUNKING", label="chunk", failure_code=FailureCode.CHUNKING_FAILED)
    VECTORIZING = StageName(
        "VECTORIZING", label="dense", failure_code=FailureCode.VECTORIZING_FAILED
    )
    PRETOKENIZE = StageName(
        "PRETOKENIZE", label="tokens", failure_code=FailureCode.PRETOKENIZE_FAILED
    )
    KEYWORD_INDEXING = StageName(
        "KEYWORD_INDEXING", label="bm25", failure_code=FailureCode.KEYWORD_INDEXING_FAILED
    )
    SPARSE_VECTORIZING = StageName(
        "SPARSE_VECTORIZING", label="sparse", failure_code=FailureCode.SPARSE_VECTORIZING_FAILED
    )

    @property
    def label(self) -> str:
        """The short name people read (CLI columns): `clean`, `dense`, `bm25`, ..."""
        return self.value.label

    @property
    def failure_code(self) -> FailureCode:
        """The code of a failure this stage's work did not name itself."""
        return self.value.failure_code

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


def _check_declaration() -> None:
    """Fail at import, not in production, when a member's value does not name it."""
    for stage in Stage:
        if stage.value != stage.name:
            raise ValueError(f"Stage.{stage.name} is declared as {str(stage.value)!r}")


_check_declaration()


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
    """Where a run failed: one of the stages (a member per `Stage`, same name and value, in
    stage order), or a check made before any stage ran."""

    _value_: str
    _ignore_ = "declared"
    for declared in Stage:  # the enum HOWTO's idiom: members from the one declaration
        vars()[declared.name] = declared.name
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
    """Every stage PENDING, for a new run."""
    return {stage: StageState() for stage in STAGE_ORDER}


def first_unfinished(stages: Mapping[Stage, StageState]) -> Stage | None:
    """The first stage that is not SUCCESS: where a failed run recovers from."""
    for stage in STAGE_ORDER:
        if stages[stage].status is not StageStatus.SUCCESS:
            return stage
    return None
