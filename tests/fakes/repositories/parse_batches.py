"""In-memory parse batches: claims, leases and holdings, each move a compare-and-set."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import attrs

from ragline.application.ports.repositories.parse_batches import NewParseBatch
from ragline.domain.parse_batch import (
    BatchStatus,
    IllegalBatchMove,
    ParseBatch,
    ParseTier,
    SourceRef,
)
from tests.fakes.repositories.base import FakeRepository, utc


class FakeParseBatches(FakeRepository):
    """Rows locked by id for writes; planning locks ("plan", sha256, tier)."""

    def _merged(self) -> dict[int, ParseBatch]:
        return dict(self.db.parse_batches) | self.uow.pending_batches

    async def lock_document(self, sha256: str, tier: ParseTier) -> None:
        await self.check("parse_batches.lock_document")
        await self.uow.lock(("plan", (sha256, tier)))

    async def list_for(self, sha256: str, tier: ParseTier) -> list[ParseBatch]:
        await self.check("parse_batches.list_for")
        return sorted(
            (b for b in self._merged().values() if b.sha256 == sha256 and b.tier is tier),
            key=lambda b: b.id,
        )

    async def add(self, batch: NewParseBatch) -> ParseBatch:
        await self.check("parse_batches.add")
        row = ParseBatch(
            id=next(self.db._batch_ids),
            sha256=batch.sha256,
            tier=batch.tier,
            page_range=batch.page_range,
            status=BatchStatus.PENDING,
            priority=batch.priority,
            created_at=utc(batch.created_at),
            source=batch.source,
            page_count=batch.page_count,
            requested_backend=batch.requested_backend,
        )
        self.db.source_tags[row.id] = batch.source_tag
        await self.uow.lock(("batch", row.id))
        self.uow.pending_batches[row.id] = row
        return row

    async def get_many(self, ids: Sequence[int]) -> list[ParseBatch]:
        await self.check("parse_batches.get_many")
        merged = self._merged()
        return [merged[i] for i in dict.fromkeys(ids) if i in merged]

    async def _locked(self, batch_id: int) -> ParseBatch | None:
        await self.uow.lock(("batch", batch_id))
        return self._merged().get(batch_id)

    async def raise_priority(self, batch_id: int, priority: int) -> bool:
        await self.check("parse_batches.raise_priority")
        row = await self._locked(batch_id)
        if row is None or not row.is_active or row.priority >= priority:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(row, priority=priority)
        return True

    async def claim_next(
        self,
        owner: str,
        now: datetime,
        lease_until: datetime,
        *,
        ids: Sequence[int] | None = None,
    ) -> ParseBatch | None:
        await self.check("parse_batches.claim_next")
        now, lease_until = utc(now), utc(lease_until)
        wanted = None if ids is None else set(ids)
        candidates = sorted(
            (
                b
                for b in self._merged().values()
                if b.claimable(now) and (wanted is None or b.id in wanted)
            ),
            key=lambda b: (-b.priority, b.id),
        )
        for seen in candidates:
            row = await self._locked(seen.id)  # then re-check, as the UPDATE's WHERE does
            if row is None or row.claims != seen.claims or not row.claimable(now):
                continue
            claimed = row.claim(owner, now, lease_until - now)
            self.uow.pending_batches[row.id] = claimed
            return claimed
        return None

    async def _held(self, batch_id: int, owner: str, claims: int) -> ParseBatch | None:
        row = await self._locked(batch_id)
        if row is None or row.status is not BatchStatus.PARSING:
            return None
        return row if (row.owner, row.claims) == (owner, claims) else None

    async def renew(self, batch_id: int, owner: str, claims: int, lease_until: datetime) -> bool:
        await self.check("parse_batches.renew")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(row, lease_until=utc(lease_until))
        return True

    async def finish(
        self,
        batch_id: int,
        owner: str,
        claims: int,
        done_at: datetime,
        backend: str,
        warnings: Sequence[str] = (),
    ) -> bool:
        await self.check("parse_batches.finish")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = row.finish(utc(done_at), backend[:64], tuple(warnings))
        return True

    async def fail(
        self, batch_id: int, owner: str, claims: int, at: datetime, code: str, message: str
    ) -> bool:
        await self.check("parse_batches.fail")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        try:
            self.uow.pending_batches[batch_id] = row.fail(code[:64], message, utc(at))
        except IllegalBatchMove:
            return False
        return True

    async def release(self, batch_id: int, owner: str, claims: int) -> bool:
        await self.check("parse_batches.release")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(
            row, status=BatchStatus.PENDING, owner=None, lease_until=None
        )
        return True

    async def held_by_prefix(self, prefix: str) -> list[ParseBatch]:
        await self.check("parse_batches.held_by_prefix")
        held = [
            b
            for b in self._merged().values()
            if b.status is BatchStatus.PARSING and (b.owner or "").startswith(prefix)
        ]
        return sorted(held, key=lambda b: b.id)

    async def find_by_source_tag(self, tag: str) -> ParseBatch | None:
        await self.check("parse_batches.find_by_source_tag")
        tagged = [b for b in self._merged().values() if self.db.source_tags.get(b.id) == tag]
        return max(tagged, key=lambda b: b.id) if tagged else None

    async def latest_source(self, sha256: str) -> SourceRef | None:
        await self.check("parse_batches.latest_source")
        mine = [b for b in self._merged().values() if b.sha256 == sha256]
        return max(mine, key=lambda b: b.id).source if mine else None

    async def add_holder(self, sha256: str, user_id: str) -> None:
        await self.check("parse_batches.add_holder")
        await self.uow.lock(("holding", (user_id, sha256)))  # the inserted key row
        if (user_id, sha256) not in self.db.parse_holdings:
            self.uow.pending_holdings.add((user_id, sha256))

    async def held_by(self, user_id: str, sha256s: Iterable[str]) -> set[str]:
        await self.check("parse_batches.held_by")
        held = self.db.parse_holdings | self.uow.pending_holdings
        return {sha256 for sha256 in set(sha256s) if (user_id, sha256) in held}
