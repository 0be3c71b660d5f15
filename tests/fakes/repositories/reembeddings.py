"""In-memory re-embeddings: generations, re-embeddings and copy batches, each write a
compare-and-set under the row's lock (read-committed + row locks, as the SQL stores)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from ragline.application.ports.repositories.errors import ConcurrentUpdate, PersistenceError
from ragline.domain.reembedding import (
    CopyBatch,
    CopyBatchStatus,
    Generations,
    Reembedding,
)
from ragline.domain.reembedding.reembedding import MAX_ERROR_CHARS
from tests.fakes.repositories.base import FakeRepository, utc


def _stored(item: Reembedding) -> Reembedding:
    """The row written: times in UTC, an independent copy."""

    def at(value: datetime | None) -> datetime | None:
        return None if value is None else utc(value)

    return attrs.evolve(
        item,
        created_at=utc(item.created_at),
        started_at=at(item.started_at),
        ready_at=at(item.ready_at),
        finished_at=at(item.finished_at),
        error=None if item.error is None else item.error[:MAX_ERROR_CHARS],
    )


def _newer(kind: str, key: str, version: int, expected: int) -> None:
    if version <= expected:
        raise ValueError(f"{kind} {key} version {version} is not newer than {expected}")


class FakeReembeddings(FakeRepository):
    def _gens(self, user_id: str) -> Generations | None:
        return self.uow.pending_generations.get(user_id, self.db.generations.get(user_id))

    def _item(self, rid: str) -> Reembedding | None:
        return self.uow.pending_reembeddings.get(rid, self.db.reembeddings.get(rid))

    def _batches(self) -> dict[tuple[str, int], CopyBatch]:
        return dict(self.db.copy_batches) | self.uow.pending_copy_batches

    async def generations(self, user_id: str) -> Generations:
        await self.check("reembeddings.generations")
        return self._gens(user_id) or Generations(user_id)

    async def save_generations(
        self,
        generations: Generations,
        expected_version: int,
        *,
        starts_seen: int | None = None,
    ) -> None:
        await self.check("reembeddings.save_generations")
        _newer("generations of", generations.user_id, generations.version, expected_version)
        await self.uow.lock(("generations", generations.user_id))
        row = self._gens(generations.user_id)
        starts = 0 if row is None else row.vectorizing_starts
        if (0 if row is None else row.version) != expected_version or (
            starts_seen is not None and starts != starts_seen
        ):
            raise ConcurrentUpdate(
                f"generations of {generations.user_id} are no longer at version {expected_version}"
            )
        stored = attrs.evolve(generations, vectorizing_starts=starts)  # never written from here
        self.uow.pending_generations[generations.user_id] = stored

    async def note_vectorizing(self, user_id: str) -> None:
        await self.check("reembeddings.note_vectorizing")
        await self.uow.lock(("generations", user_id))
        row = self._gens(user_id)
        if row is None:
            raise ConcurrentUpdate(f"user {user_id} has no generations to count a start in")
        counted = attrs.evolve(row, vectorizing_starts=row.vectorizing_starts + 1)
        self.uow.pending_generations[user_id] = counted

    async def add(self, reembedding: Reembedding) -> None:
        await self.check("reembeddings.add")
        await self.uow.lock(("reembedding", reembedding.id))
        if self._item(reembedding.id) is not None:
            raise PersistenceError(f"reembedding add failed: {reembedding.id} exists")
        self.uow.pending_reembeddings[reembedding.id] = _stored(reembedding)

    async def get(self, reembedding_id: str) -> Reembedding | None:
        await self.check("reembeddings.get")
        row = self._item(reembedding_id)
        return None if row is None else attrs.evolve(row)

    async def active_for(self, user_id: str) -> Reembedding | None:
        await self.check("reembeddings.active_for")
        mine = [x for x in await self._all() if x.user_id == user_id and x.is_active]
        return max(mine, key=lambda x: x.created_at) if mine else None

    async def list_active(self) -> list[Reembedding]:
        await self.check("reembeddings.list_active")
        return sorted(
            (x for x in await self._all() if x.is_active), key=lambda x: (x.created_at, x.id)
        )

    async def _all(self) -> list[Reembedding]:
        merged = dict(self.db.reembeddings) | self.uow.pending_reembeddings
        return [attrs.evolve(x) for x in merged.values()]

    async def save(self, reembedding: Reembedding, expected_version: int) -> None:
        await self.check("reembeddings.save")
        _newer("re-embedding", reembedding.id, reembedding.version, expected_version)
        await self.uow.lock(("reembedding", reembedding.id))
        row = self._item(reembedding.id)
        if row is None or row.version != expected_version:
            raise ConcurrentUpdate(
                f"re-embedding {reembedding.id} is no longer at version {expected_version}"
            )
        self.uow.pending_reembeddings[reembedding.id] = _stored(reembedding)

    async def add_batches(self, batches: Sequence[CopyBatch]) -> None:
        await self.check("reembeddings.add_batches")
        merged = self._batches()
        for batch in batches:
            key = (batch.reembedding_id, batch.seq)
            await self.uow.lock(("copy_batch", key))
            if key in merged:
                raise PersistenceError(f"reembedding_batch add failed: {key} exists")
            self.uow.pending_copy_batches[key] = batch

    async def batches(self, reembedding_id: str) -> list[CopyBatch]:
        await self.check("reembeddings.batches")
        mine = [b for (rid, _), b in self._batches().items() if rid == reembedding_id]
        return sorted(mine, key=lambda b: b.seq)

    async def claim_batch(
        self, reembedding_id: str, owner: str, now: datetime, lease_until: datetime
    ) -> CopyBatch | None:
        await self.check("reembeddings.claim_batch")
        now, lease_until = utc(now), utc(lease_until)
        for seen in await self.batches(reembedding_id):
            if not seen.claimable(now):
                continue
            key = (reembedding_id, seen.seq)
            await self.uow.lock(("copy_batch", key))  # then re-check, as the UPDATE's WHERE
            row = self._batches().get(key)
            if row is None or row.claims != seen.claims or not row.claimable(now):
                continue
            claimed = row.claim(owner, now, lease_until - now)
            self.uow.pending_copy_batches[key] = claimed
            return claimed
        return None

    async def _held(self, rid: str, seq: int, owner: str, claims: int) -> CopyBatch | None:
        await self.uow.lock(("copy_batch", (rid, seq)))
        row = self._batches().get((rid, seq))
        if row is None or row.status is not CopyBatchStatus.COPYING:
            return None
        return row if (row.owner, row.claims) == (owner, claims) else None

    async def renew_batch(
        self, reembedding_id: str, seq: int, owner: str, claims: int, lease_until: datetime
    ) -> bool:
        await self.check("reembeddings.renew_batch")
        row = await self._held(reembedding_id, seq, owner, claims)
        if row is None:
            return False
        self.uow.pending_copy_batches[(reembedding_id, seq)] = attrs.evolve(
            row, lease_until=utc(lease_until)
        )
        return True

    async def finish_batch(
        self,
        reembedding_id: str,
        seq: int,
        owner: str,
        claims: int,
        copied: int,
        digest: str | None = None,
    ) -> bool:
        await self.check("reembeddings.finish_batch")
        row = await self._held(reembedding_id, seq, owner, claims)
        if row is None:
            return False
        self.uow.pending_copy_batches[(reembedding_id, seq)] = row.finish(copied, digest)
        return True
