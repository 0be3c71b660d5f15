"""A copy batch: a run of chunk ids (in id order) that one worker re-embeds under a lease.

pending -> copying (a claim: owner + lease) -> done. A claim held past its lease (the worker
died) may be taken over; every claim bumps `claims`, storage's compare-and-set token, so the
old owner's late finish is refused and a chunk is re-embedded at most once more than its
batch. A batch names its chunks by bounds, so a chunk deleted meanwhile is simply not read.
A done batch keeps the digest of the chunk ids it copied (`ids_digest`), so a range whose
chunks were replaced by as many others is still seen to hold a chunk it did not copy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum

import attrs

from ragline.domain.reembedding.errors import IllegalCopyBatchMove


class CopyBatchStatus(StrEnum):
    PENDING = "pending"
    COPYING = "copying"
    DONE = "done"


@attrs.frozen
class CopyBatch:
    reembedding_id: str
    seq: int
    first_chunk_id: str
    last_chunk_id: str
    size: int
    status: CopyBatchStatus = CopyBatchStatus.PENDING
    owner: str | None = None
    lease_until: datetime | None = None
    claims: int = 0
    copied: int = 0
    digest: str | None = None
    """`ids_digest` of the chunk ids the batch copied (None: not done, or stored before it)."""

    def claimable(self, now: datetime) -> bool:
        if self.status is CopyBatchStatus.PENDING:
            return True
        return (
            self.status is CopyBatchStatus.COPYING
            and self.lease_until is not None
            and self.lease_until <= now
        )

    def claim(self, owner: str, now: datetime, lease: timedelta) -> CopyBatch:
        if not self.claimable(now):
            raise IllegalCopyBatchMove(
                f"batch {self.reembedding_id}/{self.seq} is {self.status} and its lease holds"
            )
        return attrs.evolve(
            self,
            status=CopyBatchStatus.COPYING,
            owner=owner,
            lease_until=now + lease,
            claims=self.claims + 1,
        )

    def finish(self, copied: int, digest: str | None = None) -> CopyBatch:
        if self.status is not CopyBatchStatus.COPYING:
            raise IllegalCopyBatchMove(
                f"cannot finish batch {self.reembedding_id}/{self.seq}: it is {self.status}"
            )
        return attrs.evolve(
            self, status=CopyBatchStatus.DONE, lease_until=None, copied=copied, digest=digest
        )


def split(
    reembedding_id: str, chunk_ids: Sequence[str], size: int, first_seq: int = 0
) -> list[CopyBatch]:
    """Batches of at most `size` chunks over `chunk_ids` sorted; seq numbers from `first_seq`."""
    if size < 1:
        raise ValueError(f"a batch holds at least one chunk, not {size}")
    ordered = sorted(chunk_ids)
    return [
        CopyBatch(
            reembedding_id,
            first_seq + n,
            part[0],
            part[-1],
            len(part),
        )
        for n, part in enumerate(
            ordered[start : start + size] for start in range(0, len(ordered), size)
        )
    ]


def within(batch: CopyBatch, chunk_id: str) -> bool:
    """Whether the batch's bounds name `chunk_id`."""
    return batch.first_chunk_id <= chunk_id <= batch.last_chunk_id


def ids_digest(chunk_ids: Iterable[str]) -> str:
    """One digest of a set of chunk ids, whatever their order or repeats (64 hex digits)."""
    digest = hashlib.sha256()
    for chunk_id in sorted(set(chunk_ids)):
        digest.update(chunk_id.encode("utf-8") + b"\n")
    return digest.hexdigest()
