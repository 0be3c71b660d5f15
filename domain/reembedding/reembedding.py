"""The Reembedding aggregate: one user's move from one embedding generation to the next.

PLANNED -> COPYING -> READY -> SWAPPED, and CANCELLED or FAILED from any active status. READY
goes back to COPYING when a chunk turned up without a new vector (a run landed between the
check and the swap). Every accepted move adds one to `version`, which storage uses for
compare-and-set, as ParseRun does. Times are passed in; nothing here reads a clock.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import attrs

from ragline.domain.reembedding.errors import IllegalReembeddingMove, NotCaughtUp
from ragline.domain.reembedding.generations import EmbeddingSpec


class ReembeddingStatus(StrEnum):
    PLANNED = "PLANNED"
    COPYING = "COPYING"
    READY = "READY"
    SWAPPED = "SWAPPED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"


ACTIVE_REEMBEDDING: frozenset[ReembeddingStatus] = frozenset(
    {ReembeddingStatus.PLANNED, ReembeddingStatus.COPYING, ReembeddingStatus.READY}
)
TERMINAL_REEMBEDDING: frozenset[ReembeddingStatus] = frozenset(
    {ReembeddingStatus.SWAPPED, ReembeddingStatus.CANCELLED, ReembeddingStatus.FAILED}
)

MAX_ERROR_CHARS = 2000


@attrs.define
class Reembedding:
    """Build a new one with `plan`; rebuild a stored one with the plain init."""

    id: str
    user_id: str
    source_generation: int
    target_generation: int
    target: EmbeddingSpec
    created_at: datetime
    status: ReembeddingStatus = ReembeddingStatus.PLANNED
    total: int = 0
    """Chunks to copy: those of SUCCESS lineages when the copy started, plus every catch-up."""
    done: int = 0
    started_at: datetime | None = None
    ready_at: datetime | None = None
    finished_at: datetime | None = None
    error: str | None = None
    version: int = 0
    source_dimension: int | None = None
    """The dense dimension of the source generation, so its space can be swept after the swap."""
    target_base_url: str | None = None
    target_api_key: str | None = attrs.field(default=None, repr=False)
    """With `target`, the whole EMBEDDING config the user asked for: the copy embeds with
    exactly it and the swap makes it the user's default. Storage keeps the key encrypted."""

    @classmethod
    def plan(
        cls,
        id: str,
        user_id: str,
        source_generation: int,
        target_generation: int,
        target: EmbeddingSpec,
        at: datetime,
        source_dimension: int | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> Reembedding:
        if target_generation <= source_generation:
            raise IllegalReembeddingMove(
                f"generation {target_generation} does not follow {source_generation}"
            )
        return cls(
            id,
            user_id,
            source_generation,
            target_generation,
            target,
            at,
            source_dimension=source_dimension,
            target_base_url=base_url,
            target_api_key=api_key,
        )

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_REEMBEDDING

    def start(self, total: int, at: datetime) -> None:
        """The copy is split into batches covering `total` chunks."""
        self._require({ReembeddingStatus.PLANNED}, "start")
        self._bump(status=ReembeddingStatus.COPYING, total=total, started_at=at)

    def copied(self, count: int) -> None:
        """One batch's chunks are in the new generation (a batch counts once: its finish is
        a compare-and-set on the batch's claim)."""
        self._require({ReembeddingStatus.COPYING}, "record progress on")
        if count < 0:
            raise ValueError(f"a batch copies 0 or more chunks, not {count}")
        self._bump(done=min(self.total, self.done + count))

    def catch_up(self, extra: int) -> None:
        """Chunks found without a new vector join the copy (READY goes back to COPYING)."""
        self._require({ReembeddingStatus.COPYING, ReembeddingStatus.READY}, "catch up")
        self._bump(status=ReembeddingStatus.COPYING, total=self.total + extra, ready_at=None)

    def mark_ready(self, missing: int, at: datetime) -> None:
        self._require({ReembeddingStatus.COPYING}, "mark ready")
        _require_caught_up(missing, "READY")
        self._bump(status=ReembeddingStatus.READY, done=self.total, ready_at=at)

    def swap(self, missing: int, at: datetime) -> None:
        """Commit this in one transaction with `Generations.swap`."""
        self._require({ReembeddingStatus.READY}, "swap")
        _require_caught_up(missing, "SWAPPED")
        self._bump(status=ReembeddingStatus.SWAPPED, finished_at=at)

    def cancel(self, at: datetime) -> None:
        """Commit this in one transaction with `Generations.drop_shadow`."""
        self._require(ACTIVE_REEMBEDDING, "cancel")
        self._bump(status=ReembeddingStatus.CANCELLED, finished_at=at)

    def fail(self, error: str, at: datetime) -> None:
        self._require(ACTIVE_REEMBEDDING, "fail")
        self._bump(status=ReembeddingStatus.FAILED, finished_at=at, error=error[:MAX_ERROR_CHARS])

    def _require(
        self, allowed: frozenset[ReembeddingStatus] | set[ReembeddingStatus], move: str
    ) -> None:
        if self.status not in allowed:
            raise IllegalReembeddingMove(
                f"cannot {move} re-embedding {self.id}: it is {self.status}"
            )

    def _bump(self, **changes: object) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.version += 1


def _require_caught_up(missing: int, status: str) -> None:
    if missing:
        raise NotCaughtUp(f"{missing} chunk(s) have no vector in the new generation: not {status}")
