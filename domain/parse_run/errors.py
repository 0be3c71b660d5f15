"""Domain errors: every illegal move names the invariant it would have broken
(docs/design/0002-run-state-machine.md)."""

from __future__ import annotations

from typing import ClassVar


class DomainError(Exception):
    """An illegal move on the parse-run state machine; the aggregate is left unchanged."""

    rule: ClassVar[str] = "an invariant of docs/design/0002-run-state-machine.md"

    def __init__(self, detail: str) -> None:
        super().__init__(f"{detail} (breaks {self.rule})")
        self.detail = detail


class StageOrderViolation(DomainError):
    """A stage was started while an earlier stage had not succeeded."""

    rule = "invariant 1: a stage starts only when every earlier stage is SUCCESS"


class RunAlreadyTerminal(DomainError):
    """A command tried to move a SUCCESS or FAILED run."""

    rule = "invariant 3: a terminal run is final, no automatic retries inside a run"


class IllegalStageTransition(DomainError):
    """A stage was asked to move from a status that does not allow it."""

    rule = "invariants 2 and 4: stages move PENDING -> PROCESSING -> SUCCESS | FAILED"


class RejectAfterStart(DomainError):
    """Task validation failed after a stage had already started."""

    rule = "invariant 2: validation failures happen before the first stage start"


class MarkdownCoordinatesRequired(DomainError):
    """CLEANING succeeded without saying where its Markdown is."""

    rule = "invariants 6 and 7: a run past CLEANING has Markdown coordinates to resume from"


class NotAnInheritedStage(DomainError):
    """A skip was asked for a stage that this run did not inherit as SUCCESS."""

    rule = "invariant 7: a retry run skips only inherited SUCCESS stages"


class RetryNotAllowed(DomainError):
    """A retry was asked for a run that may not be retried (or by a non-winner)."""

    rule = (
        "invariant 6: retry only a FAILED, not yet superseded run with Markdown when it "
        "recovers after CLEANING"
    )


class NotTerminal(DomainError):
    """A terminal result was asked of a run that has not finished."""

    rule = "invariant 5: the terminal notification follows the terminal state"


class IllegalChunkStatusMove(DomainError):
    """A chunk index status move was applied from a status it does not allow."""

    rule = (
        "chunk status moves are compare-and-set; a SUCCESS chunk is never redone"
        " (docs/design/0001-pipeline-contract.md)"
    )
