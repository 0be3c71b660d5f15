"""Parse batches (the parse cache): planned, claimed and finished page ranges of a file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

import attrs

from ragline.domain.parse_batch import PageRange, ParseBatch, ParseTier, SourceRef


@attrs.frozen
class NewParseBatch:
    """A batch the planning rule decided to create (pending; the store gives the id)."""

    sha256: str
    tier: ParseTier
    page_range: PageRange
    priority: int
    source: SourceRef
    created_at: datetime
    page_count: int | None = None  # pages of the whole file
    source_tag: str | None = None  # domain.parse_batch.source_tag of the source's version
    requested_backend: str | None = None  # the pdf_parser_backend the request asked for


class ParseBatchRepository(Protocol):
    async def lock_document(self, sha256: str, tier: ParseTier) -> None:
        """Serialize planning of one (sha256, tier) until this unit of work ends, so two
        concurrent requests cannot both create a batch for the same pages (a row lock on
        PostgreSQL/MariaDB; SQLite's write transaction already serializes)."""
        ...

    async def list_for(self, sha256: str, tier: ParseTier) -> list[ParseBatch]:
        """Every batch of (sha256, tier), any status, by id."""
        ...

    async def add(self, batch: NewParseBatch) -> ParseBatch:
        """Insert a pending batch and return it with its new id."""
        ...

    async def get_many(self, ids: Sequence[int]) -> list[ParseBatch]:
        """The batches with these ids, in the order asked (unknown ids are left out)."""
        ...

    async def raise_priority(self, batch_id: int, priority: int) -> bool:
        """`UPDATE ... SET priority=:p WHERE id=:id AND status IN (pending, parsing) AND
        priority < :p`; True iff a row changed."""
        ...

    async def claim_next(
        self,
        owner: str,
        now: datetime,
        lease_until: datetime,
        *,
        ids: Sequence[int] | None = None,
    ) -> ParseBatch | None:
        """Claim the most urgent claimable batch (pending, or parsing with `lease_until <=
        now`) — by priority, then id; among `ids` only when given. A compare-and-set on
        (id, claims) that moves it to parsing under `owner` and bumps `claims`: two workers
        never both win one batch. None when nothing is claimable."""
        ...

    async def renew(self, batch_id: int, owner: str, claims: int, lease_until: datetime) -> bool:
        """Extend the lease of a claim still held (parsing, same owner and claims)."""
        ...

    async def finish(
        self,
        batch_id: int,
        owner: str,
        claims: int,
        done_at: datetime,
        backend: str,
        warnings: Sequence[str] = (),
    ) -> bool:
        """CAS parsing (owner, claims) -> done with the backend that parsed it and the
        parser's warnings; False when the claim was lost."""
        ...

    async def fail(
        self, batch_id: int, owner: str, claims: int, at: datetime, code: str, message: str
    ) -> bool:
        """CAS parsing (owner, claims) -> failed with the code and message."""
        ...

    async def release(self, batch_id: int, owner: str, claims: int) -> bool:
        """CAS parsing (owner, claims) -> pending, no owner, no lease: a worker that stops
        mid-parse (Ctrl-C, shutdown) gives the batch back instead of letting its lease lapse."""
        ...

    async def held_by_prefix(self, prefix: str) -> list[ParseBatch]:
        """The batches being parsed under an owner whose name starts with `prefix` (taken
        literally: `%` and `_` are no wildcards), by id: the claims of one host's workers,
        for the release of those a dead process left behind."""
        ...

    async def find_by_source_tag(self, tag: str) -> ParseBatch | None:
        """The newest batch planned for this stored version of an object (any tier,
        status), or None: it knows the object's sha256 and page count."""
        ...

    async def latest_source(self, sha256: str) -> SourceRef | None:
        """Where the newest batch of these bytes found them (any tier), or None."""
        ...

    # -- holdings: who may see the batches of which bytes (application/access/parse_cache.py)

    async def add_holder(self, sha256: str, user_id: str) -> None:
        """Record that `user_id` holds these bytes: insert if absent, so adding a pair again
        (or from two units of work at once) is no error. Holdings are never removed."""
        ...

    async def held_by(self, user_id: str, sha256s: Iterable[str]) -> set[str]:
        """The sha256s among `sha256s` that `user_id` holds (its own uncommitted adds too)."""
        ...
