"""Contract kit for the parse-batch repository (`uow.parse_batches`, the parse cache).

A `StoreContract` like the other persistence kits (fixture `uow_factory`). What it proves:
batches round-trip; claims are compare-and-set by priority (two workers never win one batch,
a lapsed lease is taken over and the old owner's answer is then refused); only active
batches rise; planning of one (sha256, tier) is serialized by `lock_document`, so concurrent
requests cannot create overlapping batches; holdings (who may see the batches of which
bytes) are per user, insert-if-absent (adding a pair again, or from two units at once, is no
error), rolled back with their unit, and answered for many sha256s at once.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import attrs
import pytest

from ragline.application.ports.repositories.parse_batches import NewParseBatch
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_batch import (
    BatchStatus,
    PageRange,
    ParseBatch,
    ParseTier,
    SourceRef,
)
from ragline.testing.kits.persistence import StoreContract

T0 = datetime(2026, 6, 9, 1, 2, 3, 456789, tzinfo=UTC)
LEASE = timedelta(seconds=60)


def sha() -> str:
    return uuid.uuid4().hex + uuid.uuid4().hex


def new_batch(
    sha256: str,
    first: int = 1,
    last: int = 5,
    *,
    priority: int = 0,
    tier: ParseTier = ParseTier.BASIC,
) -> NewParseBatch:
    return NewParseBatch(
        sha256=sha256,
        tier=tier,
        page_range=PageRange(first, last),
        priority=priority,
        source=SourceRef("parse-cache", f"sources/{sha256}/报告.pdf", "pdf"),
        created_at=T0,
    )


class ParseBatchContract(StoreContract):
    """What every ParseBatchRepository must show; fixture `uow_factory`."""

    @staticmethod
    async def add(factory: UnitOfWorkFactory, *batches: NewParseBatch) -> list[ParseBatch]:
        async with factory() as uow:
            added = [await uow.parse_batches.add(b) for b in batches]
            await uow.commit()
        return added

    @staticmethod
    async def get(factory: UnitOfWorkFactory, batch_id: int) -> ParseBatch:
        async with factory() as uow:
            (found,) = await uow.parse_batches.get_many([batch_id])
        return found

    @staticmethod
    async def claim(
        factory: UnitOfWorkFactory,
        owner: str,
        now: datetime,
        ids: list[int] | None = None,
    ) -> ParseBatch | None:
        async with factory() as uow:
            claimed = await uow.parse_batches.claim_next(owner, now, now + LEASE, ids=ids)
            await uow.commit()
        return claimed

    async def test_batches_round_trip_and_list_by_file_and_tier(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()
        first, second, quality = await self.add(
            uow_factory,
            new_batch(digest, 1, 5),
            new_batch(digest, 6, 9, priority=3),
            new_batch(digest, 1, 9, tier=ParseTier.QUALITY),
        )
        assert second.id > first.id
        async with uow_factory() as uow:
            listed = await uow.parse_batches.list_for(digest, ParseTier.BASIC)
            by_id = await uow.parse_batches.get_many([second.id, 10**9, first.id])
            source = await uow.parse_batches.latest_source(digest)
            unknown = await uow.parse_batches.latest_source(sha())
        assert listed == [first, second]
        assert by_id == [second, first]
        assert first.status is BatchStatus.PENDING and first.claims == 0
        assert first.created_at == T0 and first.created_at.utcoffset() == timedelta(0)
        assert first.source.key.endswith("报告.pdf")
        assert source == quality.source
        assert unknown is None

    async def test_ids_past_any_stored_one_are_not_found(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """Any id a caller may name (up to 2**63 - 1, the HTTP bound) is found or not: an
        id wider than the id column is not found, never a database error."""
        (stored,) = await self.add(uow_factory, new_batch(sha(), 1, 2))
        async with uow_factory() as uow:
            found = await uow.parse_batches.get_many([2**31, stored.id, 2**63 - 1, 0, -1])
        assert found == [stored]

    async def test_a_batch_is_found_by_the_stored_version_of_its_source(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest, tag = sha(), sha()
        tagged = attrs.evolve(
            new_batch(digest, 1, 3), page_count=7, source_tag=tag, requested_backend="auto"
        )
        older, newer = await self.add(uow_factory, tagged, attrs.evolve(tagged, page_count=8))
        async with uow_factory() as uow:
            found = await uow.parse_batches.find_by_source_tag(tag)
            missing = await uow.parse_batches.find_by_source_tag(sha())
        assert found is not None and found.id == newer.id and found.sha256 == digest
        assert found.page_count == 8 and older.page_count == 7
        assert found.requested_backend == "auto"
        assert missing is None

    async def test_an_uncommitted_batch_is_rolled_back(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()
        async with uow_factory() as uow:
            await uow.parse_batches.add(new_batch(digest))
        async with uow_factory() as uow:
            assert await uow.parse_batches.list_for(digest, ParseTier.BASIC) == []

    async def test_claims_go_by_priority_then_id_and_are_compare_and_set(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()
        low, high, other = await self.add(
            uow_factory,
            new_batch(digest, 1, 1, priority=10_000),
            new_batch(digest, 2, 2, priority=10_001),
            new_batch(digest, 3, 3, priority=10_001),
        )
        ids = [low.id, high.id, other.id]
        first = await self.claim(uow_factory, "w1", T0, ids)
        second = await self.claim(uow_factory, "w2", T0, ids)
        third = await self.claim(uow_factory, "w3", T0, ids)
        assert [b.id for b in (first, second, third) if b] == [high.id, other.id, low.id]
        assert await self.claim(uow_factory, "w4", T0, ids) is None
        stored = await self.get(uow_factory, high.id)
        assert stored.status is BatchStatus.PARSING
        assert (stored.owner, stored.claims, stored.lease_until) == ("w1", 1, T0 + LEASE)
        assert stored.started_at == T0

    async def test_a_lapsed_lease_is_taken_over_and_the_old_owner_is_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        (batch,) = await self.add(uow_factory, new_batch(sha()))
        first = await self.claim(uow_factory, "dead", T0, [batch.id])
        assert first is not None
        early = T0 + LEASE - timedelta(microseconds=1)
        assert await self.claim(uow_factory, "w2", early, [batch.id]) is None
        later = T0 + LEASE
        taken = await self.claim(uow_factory, "w2", later, [batch.id])
        assert taken is not None and taken.owner == "w2" and taken.claims == 2
        async with uow_factory() as uow:
            repo = uow.parse_batches
            assert not await repo.renew(batch.id, "dead", 1, later + LEASE)
            assert not await repo.finish(batch.id, "dead", 1, later, "naive")
            assert not await repo.fail(batch.id, "dead", 1, later, "X", "late")
            assert await repo.renew(batch.id, "w2", 2, later + 2 * LEASE)
            await uow.commit()
        assert (await self.get(uow_factory, batch.id)).lease_until == later + 2 * LEASE
        async with uow_factory() as uow:
            assert await uow.parse_batches.finish(
                batch.id, "w2", 2, later, "naive+ocr", ["第2页：无文本层，已识别"]
            )
            await uow.commit()
        done = await self.get(uow_factory, batch.id)
        assert done.status is BatchStatus.DONE and done.done_at == later
        assert done.backend == "naive+ocr" and done.lease_until is None
        assert done.warnings == ("第2页：无文本层，已识别",)
        async with uow_factory() as uow:  # a done batch is never claimed or failed again
            assert (
                await uow.parse_batches.claim_next(
                    "w3", later + 9 * LEASE, later + 10 * LEASE, ids=[batch.id]
                )
                is None
            )
            assert not await uow.parse_batches.fail(batch.id, "w2", 2, later, "X", "y")

    async def test_a_released_claim_is_pending_again_and_claimed_anew(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        (batch,) = await self.add(uow_factory, new_batch(sha()))
        assert await self.claim(uow_factory, "w1", T0, [batch.id]) is not None
        async with uow_factory() as uow:
            assert not await uow.parse_batches.release(batch.id, "w2", 1)
            assert await uow.parse_batches.release(batch.id, "w1", 1)
            await uow.commit()
        released = await self.get(uow_factory, batch.id)
        assert released.status is BatchStatus.PENDING and released.owner is None
        again = await self.claim(uow_factory, "w2", T0, [batch.id])
        assert again is not None and again.claims == 2 and again.owner == "w2"

    async def test_the_claims_held_under_an_owner_prefix(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        host = f"h_{sha()[:6]}%/"  # `_` and `%` are literal, not wildcards
        mine, other_process, elsewhere, lookalike, idle = await self.add(
            uow_factory, *(new_batch(sha()) for _ in range(5))
        )
        assert await self.claim(uow_factory, f"{host}1/a", T0, [mine.id]) is not None
        assert await self.claim(uow_factory, f"{host}2/b", T0, [other_process.id]) is not None
        assert await self.claim(uow_factory, "elsewhere/1/a", T0, [elsewhere.id]) is not None
        assert await self.claim(uow_factory, host.replace("%", "x") + "3/c", T0, [lookalike.id])
        async with uow_factory() as uow:
            held = await uow.parse_batches.held_by_prefix(host)
            assert await uow.parse_batches.release(other_process.id, f"{host}2/b", 1)
            await uow.commit()
        assert [(b.id, b.owner, b.claims) for b in held] == [
            (mine.id, f"{host}1/a", 1),
            (other_process.id, f"{host}2/b", 1),
        ]
        async with uow_factory() as uow:
            after = await uow.parse_batches.held_by_prefix(host)
        assert [b.id for b in after] == [mine.id]  # a released (pending) one is not held
        assert idle.status is BatchStatus.PENDING

    async def test_failing_keeps_the_code_and_a_long_cjk_message(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        (batch,) = await self.add(uow_factory, new_batch(sha()))
        claimed = await self.claim(uow_factory, "w", T0, [batch.id])
        assert claimed is not None
        message = "解析失败：" + "页" * 3000
        async with uow_factory() as uow:
            assert await uow.parse_batches.fail(
                batch.id, "w", 1, T0, "PARSE_ENGINE_FAILED", message
            )
            await uow.commit()
        failed = await self.get(uow_factory, batch.id)
        assert failed.status is BatchStatus.FAILED and failed.error_code == "PARSE_ENGINE_FAILED"
        assert failed.error_msg == message[:2000]
        assert failed.done_at == T0

    async def test_only_active_batches_rise_and_never_fall(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        pending, done = await self.add(uow_factory, new_batch(sha()), new_batch(sha()))
        claimed = await self.claim(uow_factory, "w", T0, [done.id])
        assert claimed is not None
        async with uow_factory() as uow:
            repo = uow.parse_batches
            assert await repo.finish(done.id, "w", 1, T0, "naive")
            assert await repo.raise_priority(pending.id, 5)
            assert not await repo.raise_priority(pending.id, 4)
            assert not await repo.raise_priority(done.id, 9)
            await uow.commit()
        assert (await self.get(uow_factory, pending.id)).priority == 5
        assert (await self.get(uow_factory, done.id)).priority == 0

    async def test_concurrent_claims_never_share_a_batch(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        added = await self.add(uow_factory, *(new_batch(sha(), priority=20_000) for _ in range(4)))
        ids = [b.id for b in added]

        async def worker(name: str) -> list[int]:
            won: list[int] = []
            while (claimed := await self.claim(uow_factory, name, T0, ids)) is not None:
                won.append(claimed.id)
            return won

        results = await asyncio.gather(*(worker(f"w{i}") for i in range(3)))
        claimed = [i for won in results for i in won]
        assert sorted(claimed) == sorted(ids)  # each exactly once
        for batch_id in ids:
            assert (await self.get(uow_factory, batch_id)).claims == 1

    async def test_planning_one_document_is_serialized(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()
        barrier = None if self.serializes_transactions else asyncio.Barrier(2)

        async def planner() -> bool:
            async with uow_factory() as uow:
                if barrier is not None:
                    await asyncio.wait_for(barrier.wait(), timeout=30)
                await uow.parse_batches.lock_document(digest, ParseTier.BASIC)
                known = await uow.parse_batches.list_for(digest, ParseTier.BASIC)
                if known:
                    return False
                await asyncio.sleep(0.05)  # let the other planner try to get in here
                await uow.parse_batches.add(new_batch(digest))
                await uow.commit()
                return True

        created = await asyncio.gather(planner(), planner())
        assert sorted(created) == [False, True]
        async with uow_factory() as uow:
            assert len(await uow.parse_batches.list_for(digest, ParseTier.BASIC)) == 1

    @pytest.mark.parametrize("tier", list(ParseTier))
    async def test_lock_document_is_reentrant_in_one_unit(
        self, uow_factory: UnitOfWorkFactory, tier: ParseTier
    ) -> None:
        digest = sha()
        async with uow_factory() as uow:
            await uow.parse_batches.lock_document(digest, tier)
            await uow.parse_batches.lock_document(digest, tier)
            await uow.commit()
        async with uow_factory() as uow:  # the lock row stays; locking again works
            await uow.parse_batches.lock_document(digest, tier)

    # -- holdings ------------------------------------------------------------------------

    async def test_a_holding_is_the_users_own(self, uow_factory: UnitOfWorkFactory) -> None:
        held, other = sha(), sha()
        async with uow_factory() as uow:
            await uow.parse_batches.add_holder(held, "1001")
            assert await uow.parse_batches.held_by("1001", [held, other]) == {held}
            await uow.commit()
        async with uow_factory() as uow:
            repo = uow.parse_batches
            assert await repo.held_by("1001", [held, other, held]) == {held}
            assert await repo.held_by("2002", [held]) == set()
            assert await repo.held_by("100", [held]) == set()  # no prefix match
            assert await repo.held_by("用户甲", [held]) == set()
            assert await repo.held_by("1001", []) == set()
            assert await repo.held_by("1001", [held.upper()]) == set()  # exact bytes, exact id

    async def test_adding_a_holding_again_is_no_error(self, uow_factory: UnitOfWorkFactory) -> None:
        digest = sha()
        for _ in range(2):
            async with uow_factory() as uow:
                await uow.parse_batches.add_holder(digest, "用户甲")
                await uow.parse_batches.add_holder(digest, "用户甲")
                await uow.commit()
        async with uow_factory() as uow:
            assert await uow.parse_batches.held_by("用户甲", [digest]) == {digest}

    async def test_an_uncommitted_holding_is_rolled_back(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()
        async with uow_factory() as uow:
            await uow.parse_batches.add_holder(digest, "1001")
        async with uow_factory() as uow:
            assert await uow.parse_batches.held_by("1001", [digest]) == set()

    async def test_concurrent_adds_of_one_holding_both_commit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        digest = sha()

        async def holder() -> None:
            async with uow_factory() as uow:
                await uow.parse_batches.add_holder(digest, "1001")
                await asyncio.sleep(0.02)  # the other unit adds the same pair meanwhile
                await uow.commit()

        await asyncio.gather(holder(), holder())
        async with uow_factory() as uow:
            assert await uow.parse_batches.held_by("1001", [digest]) == {digest}

    async def test_many_holdings_are_answered_at_once(self, uow_factory: UnitOfWorkFactory) -> None:
        digests = [sha() for _ in range(1200)]  # more than one IN list of any adapter
        async with uow_factory() as uow:
            for digest in digests[::2]:
                await uow.parse_batches.add_holder(digest, "3003")
            await uow.commit()
        async with uow_factory() as uow:
            held = await uow.parse_batches.held_by("3003", digests)
        assert held == set(digests[::2])
