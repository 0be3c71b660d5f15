"""The ParseRun aggregate: one run per task_id, every declared stage, one terminal outcome.

Every command checks before it changes anything, so an illegal move raises a DomainError
and leaves the run exactly as it was. Every accepted command adds one to `version`, which
the persistence layer uses for compare-and-set (`WHERE version = :loaded_version`).
Times are passed in; nothing here reads a clock or makes an id.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import attrs

from ragline.domain.parse_run.errors import (
    IllegalStageTransition,
    MarkdownCoordinatesRequired,
    NotAnInheritedStage,
    RejectAfterStart,
    RetryNotAllowed,
    RunAlreadyTerminal,
    StageOrderViolation,
)
from ragline.domain.parse_run.events import RunEvent, RunFailed, RunSucceeded
from ragline.domain.parse_run.failure import FailureCode, FailureReason
from ragline.domain.parse_run.retry import RetryRefusal, retry_refusal
from ragline.domain.parse_run.stage import (
    STAGE_ORDER,
    FailurePoint,
    PipelineStatus,
    Stage,
    StageState,
    StageStatus,
    first_unfinished,
    fresh_stages,
)


@attrs.frozen
class TaskIdentity:
    """The ids a parse task message carries; task_id is unique per run."""

    task_id: str
    original_file_id: str
    document_parse_task_id: str
    user_id: str
    dataset_id: str
    file_type: str

    def same_file(self, other: TaskIdentity) -> bool:
        """Whether `other` names this tenant's same file (user, dataset, original file): a
        message with this task_id naming another is not a redelivery of it."""
        return (self.user_id, self.dataset_id, self.original_file_id) == (
            other.user_id,
            other.dataset_id,
            other.original_file_id,
        )


@attrs.frozen
class MarkdownLocation:
    """Where a run's Markdown lives (md_bucket, md_object_key); a retry re-reads it."""

    bucket: str
    object_key: str


def _check_stages(
    _: object, __: attrs.Attribute[dict[Stage, StageState]], value: dict[Stage, StageState]
) -> None:
    if list(value) != list(STAGE_ORDER):
        raise ValueError("stages must hold exactly the declared stages, in order")


def _ordered(value: dict[Stage, StageState]) -> dict[Stage, StageState]:
    """Rows may come back in any key order; keep the dict in pipeline order."""
    if tuple(value) == STAGE_ORDER:
        return value
    return {stage: value[stage] for stage in STAGE_ORDER if stage in value} | value


@attrs.define
class ParseRun:
    """One parse run. Build a new one with `open`; rebuild a stored one with the plain init."""

    identity: TaskIdentity
    created_at: datetime
    stages: dict[Stage, StageState] = attrs.field(
        factory=fresh_stages, converter=_ordered, validator=_check_stages
    )
    pipeline_status: PipelineStatus = PipelineStatus.PENDING
    failed_stage: FailurePoint | None = None
    recover_from_stage: Stage | None = None
    failure_reason: FailureReason | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    markdown: MarkdownLocation | None = None
    superseded_by_task_id: str | None = None
    retry_of_task_id: str | None = None
    version: int = 0
    _events: list[RunEvent] = attrs.field(factory=list, init=False, eq=False, repr=False)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def open(cls, identity: TaskIdentity, at: datetime) -> ParseRun:
        """A new PENDING run, created before anything else happens for its task_id."""
        return cls(identity=identity, created_at=at)

    @classmethod
    def retry_loser(
        cls,
        identity: TaskIdentity,
        previous_task_id: str,
        refusal: RetryRefusal,
        at: datetime,
    ) -> ParseRun:
        """The audit run of a refused retry: FAILED at RETRY_VALIDATION, previous untouched."""
        run = cls(identity=identity, created_at=at, retry_of_task_id=previous_task_id)
        run.fail_retry_validation(refusal, at)
        return run

    def derive_retry(self, new_task_id: str, at: datetime) -> ParseRun:
        """The retry run for the task that won `supersede`: SUCCESS stages inherited.

        Inherited stages keep status and duration and are marked inherited; the rest start
        over as PENDING. Markdown coordinates carry over only with an inherited CLEANING.
        """
        if self.superseded_by_task_id != new_task_id:
            raise RetryNotAllowed(
                f"run {self.task_id} is not superseded by {new_task_id}; supersede it first"
            )
        stages = {
            stage: (
                StageState(StageStatus.SUCCESS, duration_ms=state.duration_ms, inherited=True)
                if state.status is StageStatus.SUCCESS
                else StageState()
            )
            for stage, state in self.stages.items()
        }
        inherits_cleaning = stages[Stage.CLEANING].inherited
        return ParseRun(
            identity=attrs.evolve(self.identity, task_id=new_task_id),
            created_at=at,
            stages=stages,
            markdown=self.markdown if inherits_cleaning else None,
            retry_of_task_id=self.task_id,
        )

    # -- reading ------------------------------------------------------------------------

    @property
    def task_id(self) -> str:
        """The run's unique id."""
        return self.identity.task_id

    @property
    def is_terminal(self) -> bool:
        """SUCCESS or FAILED."""
        return self.pipeline_status.is_terminal

    @property
    def touched_index(self) -> bool:
        """Whether the document's chunk set (and so its index) is this run's: it started
        CHUNKING, or inherited it from the run it retries. A run that never got that far
        (refused, rejected, failed while CLEANING) left the document's index as it was."""
        return self.stages[Stage.CHUNKING].status is not StageStatus.PENDING

    def status_of(self, stage: Stage) -> StageStatus:
        """Status of one stage."""
        return self.stages[stage].status

    def stages_in_order(self) -> Iterator[tuple[Stage, StageState]]:
        """(stage, state) pairs in pipeline order."""
        return iter(self.stages.items())

    @property
    def next_stage(self) -> Stage | None:
        """The first stage not yet SUCCESS: where work resumes."""
        return first_unfinished(self.stages)

    @property
    def pending_events(self) -> tuple[RunEvent, ...]:
        """Events not pulled yet."""
        return tuple(self._events)

    def pull_events(self) -> list[RunEvent]:
        """Hand over the recorded events (call after the state is committed)."""
        events, self._events = self._events, []
        return events

    # -- stage commands -----------------------------------------------------------------

    def start_stage(self, stage: Stage, at: datetime) -> None:
        """PENDING -> PROCESSING; the first start also moves the pipeline to PROCESSING."""
        self._require_live()
        if self.stages[stage].status is not StageStatus.PENDING:
            raise IllegalStageTransition(
                f"{stage.value} is {self.stages[stage].status.value}, only PENDING starts"
            )
        blocked = [s.value for s in stage.earlier if self.status_of(s) is not StageStatus.SUCCESS]
        if blocked:
            raise StageOrderViolation(f"{stage.value} cannot start before {', '.join(blocked)}")
        self.stages[stage] = StageState(StageStatus.PROCESSING, started_at=at)
        self._begin(at)
        self.failed_stage = None
        self.recover_from_stage = None
        self.failure_reason = None
        self.version += 1

    def succeed_stage(
        self,
        stage: Stage,
        at: datetime,
        duration_ms: int,
        markdown: MarkdownLocation | None = None,
    ) -> None:
        """PROCESSING -> SUCCESS; CLEANING must say where its Markdown is, the last stage
        finishes the run."""
        self._require_processing(stage)
        if duration_ms < 0:
            raise ValueError("duration_ms must not be negative")
        if (stage is Stage.CLEANING) != (markdown is not None):
            raise MarkdownCoordinatesRequired(
                "CLEANING success carries Markdown coordinates; other stages do not"
            )
        self.stages[stage] = attrs.evolve(
            self.stages[stage], status=StageStatus.SUCCESS, finished_at=at, duration_ms=duration_ms
        )
        if markdown is not None:
            self.markdown = markdown
        if stage.is_last:
            self._finish_success(at)
        self.version += 1

    def fail_stage(
        self,
        stage: Stage,
        code: FailureCode,
        detail: str,
        at: datetime,
        duration_ms: int | None = None,
    ) -> None:
        """PROCESSING -> FAILED, and the run is FAILED for good (no automatic retry)."""
        self._require_processing(stage)
        self.stages[stage] = attrs.evolve(
            self.stages[stage], status=StageStatus.FAILED, finished_at=at, duration_ms=duration_ms
        )
        self._finish_failed(FailurePoint.of(stage), FailureReason.of(code, detail), at)
        self.version += 1

    def skip_inherited_stage(self, stage: Stage, at: datetime) -> None:
        """Pass over a stage inherited as SUCCESS; skipping the last one finishes the run."""
        self._require_live()
        state = self.stages[stage]
        if not (state.inherited and state.status is StageStatus.SUCCESS):
            raise NotAnInheritedStage(f"{stage.value} was not inherited as SUCCESS")
        self._begin(at)
        if stage.is_last:
            self._finish_success(at)
        self.version += 1

    # -- run-level failures -------------------------------------------------------------

    def reject(self, code: FailureCode, detail: str, at: datetime) -> None:
        """Fail the task before any stage ran (e.g. INVALID_TASK_CONTEXT)."""
        self._fail_before_start(FailurePoint.TASK_VALIDATION, FailureReason.of(code, detail), at)

    def fail_retry_validation(self, refusal: RetryRefusal, at: datetime) -> None:
        """Fail a retry run whose retry was refused; its previous run is not touched."""
        reason = FailureReason.of(FailureCode.RETRY_VALIDATION_FAILED, refusal.value)
        self._fail_before_start(FailurePoint.RETRY_VALIDATION, reason, at)

    def converge_interrupted(self, at: datetime, detail: str = "redelivered unfinished") -> None:
        """A redelivered run found unfinished: FAILED INTERRUPTED_TASK, recoverable by retry.

        The stage that was in flight (if any) becomes FAILED; SUCCESS stages stay SUCCESS.
        """
        self._require_live()
        in_flight = [s for s, st in self.stages.items() if st.status is StageStatus.PROCESSING]
        stage = in_flight[0] if in_flight else first_unfinished(self.stages)
        if stage is None:
            raise IllegalStageTransition("every stage is SUCCESS but the run is not terminal")
        if in_flight:
            self.stages[stage] = attrs.evolve(
                self.stages[stage], status=StageStatus.FAILED, finished_at=at
            )
        reason = FailureReason.of(FailureCode.INTERRUPTED_TASK, detail)
        self._finish_failed(FailurePoint.of(stage), reason, at)
        self.version += 1

    def abort(self, code: FailureCode, detail: str, at: datetime) -> None:
        """End an unfinished run FAILED with `code` wherever it stands (an unexpected error
        the stages did not classify): the stage in flight fails; a run not started yet is
        rejected; between stages, the next stage is started and failed."""
        self._require_live()
        in_flight = [s for s, st in self.stages_in_order() if st.status is StageStatus.PROCESSING]
        if in_flight:
            self.fail_stage(in_flight[0], code, detail, at)
        elif self.pipeline_status is PipelineStatus.PENDING:
            self.reject(code, detail, at)
        else:
            stage = self.next_stage
            if stage is None:
                raise IllegalStageTransition("every stage is SUCCESS but the run is not terminal")
            self.start_stage(stage, at)
            self.fail_stage(stage, code, detail, at)

    def retry_mismatch(self, retry: TaskIdentity) -> str | None:
        """Why `retry` may not retry this run: it must name the same tenant and file."""
        for name in ("user_id", "dataset_id", "original_file_id"):
            if getattr(self.identity, name) != getattr(retry, name):
                return f"retry {name} {getattr(retry, name)} differs from the previous run's"
        return None

    def supersede(self, by_task_id: str) -> None:
        """Record the retry that took this FAILED run over (once, invariant 6 of
        docs/design/0002-run-state-machine.md)."""
        refusal = retry_refusal(self, by_task_id)
        if refusal is not None:
            raise RetryNotAllowed(f"run {self.task_id} cannot be retried: {refusal.value}")
        self.superseded_by_task_id = by_task_id
        self.version += 1

    # -- internals ----------------------------------------------------------------------

    def _require_live(self) -> None:
        if self.pipeline_status.is_terminal:
            raise RunAlreadyTerminal(f"run {self.task_id} is {self.pipeline_status.value}")

    def _require_processing(self, stage: Stage) -> None:
        self._require_live()
        if self.stages[stage].status is not StageStatus.PROCESSING:
            raise IllegalStageTransition(
                f"{stage.value} is {self.stages[stage].status.value}, not PROCESSING"
            )

    def _begin(self, at: datetime) -> None:
        if self.pipeline_status is PipelineStatus.PENDING:
            self.pipeline_status = PipelineStatus.PROCESSING
            self.started_at = at

    def _fail_before_start(self, point: FailurePoint, reason: FailureReason, at: datetime) -> None:
        self._require_live()
        if self.pipeline_status is not PipelineStatus.PENDING:
            raise RejectAfterStart(f"run {self.task_id} already started")
        self._finish_failed(point, reason, at)
        self.version += 1

    def _finish_success(self, at: datetime) -> None:
        self.pipeline_status = PipelineStatus.SUCCESS
        self.finished_at = at
        self._events.append(RunSucceeded(self.task_id, at))

    def _finish_failed(self, point: FailurePoint, reason: FailureReason, at: datetime) -> None:
        self.pipeline_status = PipelineStatus.FAILED
        self.failed_stage = point
        self.recover_from_stage = first_unfinished(self.stages)
        self.failure_reason = reason
        self.finished_at = at
        self._events.append(RunFailed(self.task_id, at, reason))
