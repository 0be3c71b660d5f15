"""Per-chunk index status (dense and sparse) and its compare-and-set moves.

A move names the statuses it may start from; storage runs it as
`UPDATE ... SET status = :to WHERE id IN (...) AND status IN (:allowed_from)` and checks the
rowcount. No move starts from SUCCESS, so a SUCCESS chunk is never re-done
(docs/design/0001-pipeline-contract.md).
"""

from __future__ import annotations

import enum

import attrs

from ragline.domain.parse_run.errors import IllegalChunkStatusMove


class ChunkIndexStatus(enum.Enum):
    """Index status of one chunk in one index (dense or sparse)."""

    PENDING = "PENDING"
    INDEXING = "INDEXING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


@attrs.frozen
class ChunkStatusMove:
    """A named compare-and-set: from any of `allowed_from` to `to`."""

    name: str
    allowed_from: frozenset[ChunkIndexStatus]
    to: ChunkIndexStatus

    def permits(self, current: ChunkIndexStatus) -> bool:
        """True when a chunk in `current` may take this move."""
        return current in self.allowed_from

    def apply(self, current: ChunkIndexStatus) -> ChunkIndexStatus:
        """The status after the move; IllegalChunkStatusMove when `current` is not allowed."""
        if current not in self.allowed_from:
            raise IllegalChunkStatusMove(f"{self.name} does not start from {current.value}")
        return self.to


_S = ChunkIndexStatus
BEGIN_INDEXING = ChunkStatusMove("BEGIN_INDEXING", frozenset({_S.PENDING, _S.FAILED}), _S.INDEXING)
COMPLETE = ChunkStatusMove("COMPLETE", frozenset({_S.INDEXING}), _S.SUCCESS)
FAIL = ChunkStatusMove("FAIL", frozenset({_S.INDEXING}), _S.FAILED)
CHUNK_STATUS_MOVES: tuple[ChunkStatusMove, ...] = (BEGIN_INDEXING, COMPLETE, FAIL)
del _S


def needs_indexing(status: ChunkIndexStatus) -> bool:
    """Whether a resumed stage must (re)index this chunk: everything but SUCCESS (invariant 7 of
    docs/design/0002-run-state-machine.md).

    A chunk left INDEXING by an interrupted run is first moved to FAILED with `FAIL`, then
    BEGIN_INDEXING takes it like any other failed chunk.
    """
    return status is not ChunkIndexStatus.SUCCESS
