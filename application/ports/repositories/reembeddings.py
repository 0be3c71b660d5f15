"""Re-embeddings (issue 21): each user's embedding generations, the re-embeddings that move
a user from one to the next, and their copy batches claimed under a lease.

Every status change is a compare-and-set whose rowcount is checked: generations and
re-embeddings on their `version` (a lost race raises ConcurrentUpdate), copy batches on
(owner, claims) (a lost claim answers False), so two workers never both win one batch and a
worker whose lease was taken over cannot finish its successor's batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from ragline.domain.reembedding import CopyBatch, Generations, Reembedding


class ReembeddingRepository(Protocol):
    async def generations(self, user_id: str) -> Generations:
        """The user's generations; a user never re-embedded has `Generations(user_id)`."""
        ...

    async def save_generations(
        self,
        generations: Generations,
        expected_version: int,
        *,
        starts_seen: int | None = None,
    ) -> None:
        """Insert (expected_version 0 and no row yet) or `UPDATE ... WHERE version =
        :expected` (and, given `starts_seen`, `AND vectorizing_starts = :starts_seen`: the
        swap's check that no VECTORIZING began since it read them); ConcurrentUpdate when no
        row matched. `vectorizing_starts` is never written here. ValueError before any write
        when `generations.version` is not newer than `expected_version`."""
        ...

    async def note_vectorizing(self, user_id: str) -> None:
        """Count one VECTORIZING start of the user (`vectorizing_starts + 1`, an increment, not
        a compare-and-set: it moves no status, and every start must count). ConcurrentUpdate
        when the user has no generations row (callers note only while a shadow is open)."""
        ...

    async def add(self, reembedding: Reembedding) -> None:
        """Insert a new re-embedding (its id must be new)."""
        ...

    async def get(self, reembedding_id: str) -> Reembedding | None: ...

    async def active_for(self, user_id: str) -> Reembedding | None:
        """The user's PLANNED, COPYING or READY re-embedding (at most one: opening a shadow
        is a CAS on the user's generations), or None."""
        ...

    async def list_active(self) -> list[Reembedding]:
        """Every active re-embedding, oldest first: the worker loops' to-do list."""
        ...

    async def save(self, reembedding: Reembedding, expected_version: int) -> None:
        """`UPDATE ... WHERE id = :id AND version = :expected`; ConcurrentUpdate when no row
        matched. ValueError before any write when the version is not newer."""
        ...

    async def add_batches(self, batches: Sequence[CopyBatch]) -> None:
        """Insert pending copy batches (their (reembedding_id, seq) must be new)."""
        ...

    async def batches(self, reembedding_id: str) -> list[CopyBatch]:
        """Every batch of one re-embedding, by seq."""
        ...

    async def claim_batch(
        self, reembedding_id: str, owner: str, now: datetime, lease_until: datetime
    ) -> CopyBatch | None:
        """Claim the lowest-seq claimable batch (pending, or copying with `lease_until <=
        now`) by a CAS on its `claims`, bumping them; None when nothing is claimable."""
        ...

    async def renew_batch(
        self, reembedding_id: str, seq: int, owner: str, claims: int, lease_until: datetime
    ) -> bool:
        """Extend the lease of a claim still held (copying, same owner and claims)."""
        ...

    async def finish_batch(
        self,
        reembedding_id: str,
        seq: int,
        owner: str,
        claims: int,
        copied: int,
        digest: str | None = None,
    ) -> bool:
        """CAS copying (owner, claims) -> done with the chunks it copied (their count and
        `ids_digest`); False when the claim was lost."""
        ...
