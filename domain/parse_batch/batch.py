"""ParseBatch: one unit of parsing work (a page range of one file at one tier) and its moves.

pending -> parsing (a claim: an owner and a lease) -> done | failed. A claim held past its
lease (the worker died) may be taken over by another claim; every claim bumps `claims`, which
storage uses as the compare-and-set version, so a late answer from the old owner is refused.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from enum import StrEnum

import attrs

from ragline.domain.parse_batch.pages import PageRange, ParseTier


class BatchStatus(StrEnum):
    PENDING = "pending"
    PARSING = "parsing"
    DONE = "done"
    FAILED = "failed"


ACTIVE_STATUSES: frozenset[BatchStatus] = frozenset({BatchStatus.PENDING, BatchStatus.PARSING})
TERMINAL_STATUSES: frozenset[BatchStatus] = frozenset({BatchStatus.DONE, BatchStatus.FAILED})


class IllegalBatchMove(Exception):
    """The move is not allowed from the batch's current status."""


@attrs.frozen
class SourceRef:
    """Where a worker finds the bytes of the file (sha256 names them; this says where)."""

    bucket: str
    key: str
    file_type: str


def source_tag(bucket: str, key: str, etag: str) -> str:
    """Names one stored version of one object (its store's etag changes with its bytes), so
    a later run can find the sha256 of an object it has not downloaded."""
    return hashlib.sha256(f"{bucket}\0{key}\0{etag}".encode()).hexdigest()


@attrs.frozen
class ParseBatch:
    id: int
    sha256: str
    tier: ParseTier
    page_range: PageRange
    status: BatchStatus
    priority: int
    created_at: datetime
    source: SourceRef
    started_at: datetime | None = None
    done_at: datetime | None = None
    error_code: str | None = None
    error_msg: str | None = None
    owner: str | None = None
    lease_until: datetime | None = None
    claims: int = 0
    backend: str | None = None
    """The engine that really parsed it (ParsedDocument.backend), once done."""
    page_count: int | None = None
    """Pages of the whole file, as counted when the batch was planned."""
    requested_backend: str | None = None
    """The backend the request that created it asked for (a worker parses with it)."""
    warnings: tuple[str, ...] = ()
    """What the parser warned about, kept with the pages (a cache hit reports them too)."""

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def claimable(self, now: datetime) -> bool:
        """Pending, or parsing under a lease that ran out (its worker is presumed dead)."""
        if self.status is BatchStatus.PENDING:
            return True
        return (
            self.status is BatchStatus.PARSING
            and self.lease_until is not None
            and self.lease_until <= now
        )

    def claim(self, owner: str, now: datetime, lease: timedelta) -> ParseBatch:
        if not self.claimable(now):
            raise IllegalBatchMove(f"batch {self.id} is {self.status} and its lease holds")
        return attrs.evolve(
            self,
            status=BatchStatus.PARSING,
            owner=owner,
            lease_until=now + lease,
            started_at=now,
            claims=self.claims + 1,
        )

    def renew(self, now: datetime, lease: timedelta) -> ParseBatch:
        self._require_parsing("renew")
        return attrs.evolve(self, lease_until=now + lease)

    def finish(self, now: datetime, backend: str, warnings: tuple[str, ...] = ()) -> ParseBatch:
        self._require_parsing("finish")
        return attrs.evolve(
            self,
            status=BatchStatus.DONE,
            done_at=now,
            backend=backend,
            lease_until=None,
            warnings=warnings,
        )

    def fail(self, code: str, message: str, now: datetime) -> ParseBatch:
        self._require_parsing("fail")
        return attrs.evolve(
            self,
            status=BatchStatus.FAILED,
            done_at=now,
            error_code=code,
            error_msg=message[:MAX_ERROR_CHARS],
            lease_until=None,
        )

    def raised_to(self, priority: int) -> ParseBatch:
        """Reused by a request of `priority`: never lowered."""
        if not self.is_active:
            raise IllegalBatchMove(f"batch {self.id} is {self.status}: only active batches rise")
        return attrs.evolve(self, priority=max(self.priority, priority))

    def _require_parsing(self, move: str) -> None:
        if self.status is not BatchStatus.PARSING:
            raise IllegalBatchMove(f"cannot {move} batch {self.id}: it is {self.status}")


MAX_ERROR_CHARS = 2000
