"""What handling one message came to; the consumer settles the delivery from it."""

from __future__ import annotations

import enum

import attrs


class OutcomeKind(enum.Enum):
    RAN = "ran"  # the run went through the stages to a terminal state
    REJECTED = "rejected"  # FAILED INVALID_TASK_CONTEXT before any stage
    RETRY_REFUSED = "retry_refused"  # the retry lost or was invalid: its own FAILED run
    RESENT = "resent"  # redelivery of a terminal run: its result queued again
    INTERRUPTED = "interrupted"  # redelivery of an unfinished run: FAILED INTERRUPTED_TASK
    UNREADABLE = "unreadable"  # no task_id could be read: dead-letter the message
    DUPLICATE = "duplicate"  # task_id taken by another task (tenant/file): dead-letter it


@attrs.frozen
class PipelineOutcome:
    kind: OutcomeKind
    task_id: str | None
    detail: str | None = None

    @property
    def settled_by_result(self) -> bool:
        """True when a terminal result is stored (and queued): the message can be acked.
        Otherwise nothing was stored for it and it is dead-lettered with `detail`."""
        return self.kind not in (OutcomeKind.UNREADABLE, OutcomeKind.DUPLICATE)
