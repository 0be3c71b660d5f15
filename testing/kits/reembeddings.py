"""Contract kit for the re-embedding repository (`uow.reembeddings`, issue 21).

A `StoreContract` like the other persistence kits (fixture `uow_factory`). What it proves:
a user never re-embedded is at generation 0; generations and re-embeddings round-trip (with
the whole target EMBEDDING config: base_url and API key, the key never in a repr) and
every save is a version compare-and-set (a stale one raises ConcurrentUpdate and changes
nothing; two planners racing on one user's first row never both win); only active
re-embeddings are listed; copy batches round-trip, are claimed lowest seq first by a CAS on
their claims (concurrent workers never win one batch twice), a lapsed lease is taken over
and the old owner's renew and finish are then refused; writes roll back with their unit.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import attrs
import pytest

from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.reembedding import (
    CopyBatch,
    CopyBatchStatus,
    EmbeddingSpec,
    Generations,
    IllegalGenerationMove,
    Reembedding,
    ReembeddingStatus,
    ids_digest,
    split,
)
from ragline.testing.kits.persistence import StoreContract

T0 = datetime(2026, 6, 9, 1, 2, 3, 456789, tzinfo=UTC)
LEASE = timedelta(seconds=60)


def user() -> str:
    return f"u-{uuid.uuid4().hex[:12]}"


def planned(user_id: str, target: int = 1) -> Reembedding:
    return Reembedding.plan(
        uuid.uuid4().hex,
        user_id,
        target - 1,
        target,
        EmbeddingSpec("openai", "模型-y", 768),
        T0,
        source_dimension=384,
        base_url="https://models.example/v1/é",
        api_key=f"sk-{uuid.uuid4().hex}",
    )


class ReembeddingContract(StoreContract):
    """What every ReembeddingRepository must show; fixture `uow_factory`."""

    @staticmethod
    async def plan(factory: UnitOfWorkFactory, user_id: str) -> Reembedding:
        """One transaction, as the use case does: the shadow opened, the row added."""
        async with factory() as uow:
            gens = await uow.reembeddings.generations(user_id)
            opened = gens.open_shadow(gens.next_generation)
            item = planned(user_id, opened.newest)
            await uow.reembeddings.save_generations(opened, gens.version)
            await uow.reembeddings.add(item)
            await uow.commit()
        return item

    @staticmethod
    async def add_batches(factory: UnitOfWorkFactory, batches: list[CopyBatch]) -> None:
        async with factory() as uow:
            await uow.reembeddings.add_batches(batches)
            await uow.commit()

    @staticmethod
    async def claim(
        factory: UnitOfWorkFactory, rid: str, owner: str, now: datetime
    ) -> CopyBatch | None:
        async with factory() as uow:
            claimed = await uow.reembeddings.claim_batch(rid, owner, now, now + LEASE)
            await uow.commit()
        return claimed

    @staticmethod
    async def batches(factory: UnitOfWorkFactory, rid: str) -> list[CopyBatch]:
        async with factory() as uow:
            return await uow.reembeddings.batches(rid)

    # -- generations ----------------------------------------------------------------------

    async def test_a_new_user_is_at_generation_zero(self, uow_factory: UnitOfWorkFactory) -> None:
        async with uow_factory() as uow:
            assert await uow.reembeddings.generations("nobody") == Generations("nobody")

    async def test_generations_round_trip_and_cas(self, uow_factory: UnitOfWorkFactory) -> None:
        uid = user()
        opened = Generations(uid).open_shadow(1)
        async with uow_factory() as uow:
            await uow.reembeddings.save_generations(opened, 0)
            await uow.commit()
        swapped = opened.swap(1)
        async with uow_factory() as uow:
            await uow.reembeddings.save_generations(swapped, opened.version)
            await uow.commit()
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.reembeddings.save_generations(opened.drop_shadow(1), opened.version)
            with pytest.raises(ConcurrentUpdate):  # a second first row
                await uow.reembeddings.save_generations(Generations(uid).open_shadow(1), 0)
            with pytest.raises(ValueError, match="not newer"):
                await uow.reembeddings.save_generations(swapped, swapped.version)
        async with uow_factory() as uow:
            assert await uow.reembeddings.generations(uid) == swapped

    async def test_writes_roll_back_with_their_unit(self, uow_factory: UnitOfWorkFactory) -> None:
        uid = user()
        async with uow_factory() as uow:
            await uow.reembeddings.save_generations(Generations(uid).open_shadow(1), 0)
            await uow.reembeddings.add(planned(uid))
        async with uow_factory() as uow:
            assert await uow.reembeddings.generations(uid) == Generations(uid)
            assert await uow.reembeddings.active_for(uid) is None

    async def test_vectorizing_starts_are_counted_and_never_overwritten(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        uid = user()
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):  # no row: nothing to count in
                await uow.reembeddings.note_vectorizing(uid)
        opened = Generations(uid).open_shadow(1)
        async with uow_factory() as uow:
            await uow.reembeddings.save_generations(opened, 0)
            await uow.commit()
        for _ in range(2):
            async with uow_factory() as uow:
                await uow.reembeddings.note_vectorizing(uid)
                await uow.commit()
        async with uow_factory() as uow:
            await uow.reembeddings.note_vectorizing(uid)  # rolled back: not counted
        async with uow_factory() as uow:
            seen = await uow.reembeddings.generations(uid)
        assert (seen.version, seen.vectorizing_starts) == (opened.version, 2)
        async with uow_factory() as uow:  # a plain save (a cancel) keeps the count
            await uow.reembeddings.save_generations(opened.drop_shadow(1), opened.version)
            await uow.commit()
        async with uow_factory() as uow:
            assert (await uow.reembeddings.generations(uid)).vectorizing_starts == 2

    async def test_a_swap_that_saw_fewer_starts_is_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        uid = user()
        opened = Generations(uid).open_shadow(1)
        async with uow_factory() as uow:
            await uow.reembeddings.save_generations(opened, 0)
            await uow.commit()
        async with uow_factory() as uow:
            seen = await uow.reembeddings.generations(uid)
        async with uow_factory() as uow:  # a run begins VECTORIZING after the swap's read
            await uow.reembeddings.note_vectorizing(uid)
            await uow.commit()
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.reembeddings.save_generations(
                    seen.swap(1), seen.version, starts_seen=seen.vectorizing_starts
                )
        async with uow_factory() as uow:
            again = await uow.reembeddings.generations(uid)
            await uow.reembeddings.save_generations(
                again.swap(1), again.version, starts_seen=again.vectorizing_starts
            )
            await uow.commit()
        async with uow_factory() as uow:
            final = await uow.reembeddings.generations(uid)
        assert (final.active, final.shadow, final.vectorizing_starts) == (1, None, 1)

    async def test_two_planners_on_one_user_never_both_win(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        uid = user()

        async def planner() -> bool:
            try:
                await self.plan(uow_factory, uid)
            except (ConcurrentUpdate, IllegalGenerationMove):  # raced, or saw the winner's shadow
                return False
            return True

        assert sorted(await asyncio.gather(planner(), planner())) == [False, True]
        async with uow_factory() as uow:
            gens = await uow.reembeddings.generations(uid)
            assert (gens.active, gens.shadow, gens.version) == (0, 1, 1)

    # -- re-embeddings ---------------------------------------------------------------------

    async def test_a_reembedding_round_trips_through_its_moves(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        item = await self.plan(uow_factory, user())
        async with uow_factory() as uow:
            assert await uow.reembeddings.get(item.id) == item
        steps = 0
        while item.status is not ReembeddingStatus.FAILED:
            expected = item.version
            at = T0 + timedelta(seconds=steps)
            if steps == 0:
                item.start(3, at)
            elif steps == 1:
                item.copied(3)
            elif steps == 2:
                item.mark_ready(0, at)
            else:
                item.fail("é" * 3000, at)
            steps += 1
            async with uow_factory() as uow:
                await uow.reembeddings.save(item, expected)
                await uow.commit()
            async with uow_factory() as uow:
                assert await uow.reembeddings.get(item.id) == item
        assert item.error is not None and len(item.error) == 2000

    async def test_the_target_config_travels_with_the_row(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        item = await self.plan(uow_factory, user())
        bare = Reembedding.plan(uuid.uuid4().hex, user(), 0, 1, EmbeddingSpec("local", "m", 8), T0)
        async with uow_factory() as uow:
            await uow.reembeddings.add(bare)
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.reembeddings.get(item.id)
            assert stored is not None and stored.target_api_key == item.target_api_key
            assert stored.target_base_url == item.target_base_url
            listed = {x.id: x for x in await uow.reembeddings.list_active()}
            assert listed[item.id].target_api_key == item.target_api_key
            plain = await uow.reembeddings.get(bare.id)
            assert plain is not None
            assert (plain.target_base_url, plain.target_api_key) == (None, None)
        assert item.target_api_key is not None and item.target_api_key not in repr(stored)

    async def test_a_stale_save_is_refused_and_changes_nothing(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        item = await self.plan(uow_factory, user())
        first, second = attrs.evolve(item), attrs.evolve(item)
        first.start(5, T0)
        second.cancel(T0)
        async with uow_factory() as uow:
            await uow.reembeddings.save(first, 0)
            await uow.commit()
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.reembeddings.save(second, 0)
        async with uow_factory() as uow:
            assert await uow.reembeddings.get(item.id) == first
            assert await uow.reembeddings.get("no-such-id") is None

    async def test_only_active_ones_are_listed(self, uow_factory: UnitOfWorkFactory) -> None:
        live, done = await self.plan(uow_factory, user()), await self.plan(uow_factory, user())
        done.cancel(T0)
        async with uow_factory() as uow:
            await uow.reembeddings.save(done, 0)
            await uow.commit()
        async with uow_factory() as uow:
            listed = [x.id for x in await uow.reembeddings.list_active()]
            assert live.id in listed and done.id not in listed
            assert await uow.reembeddings.active_for(live.user_id) == live
            assert await uow.reembeddings.active_for(done.user_id) is None
        assert done.status is ReembeddingStatus.CANCELLED

    # -- copy batches ------------------------------------------------------------------------

    async def test_batches_round_trip_and_claim_lowest_seq_first(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        rid = uuid.uuid4().hex
        made = split(rid, [f"chunk-{n:03d}" for n in range(5)], 2)
        await self.add_batches(uow_factory, made)
        assert await self.batches(uow_factory, rid) == made
        first = await self.claim(uow_factory, rid, "w1", T0)
        second = await self.claim(uow_factory, rid, "w2", T0)
        assert first is not None and second is not None
        assert (first.seq, first.owner, first.claims) == (0, "w1", 1)
        assert second.seq == 1
        digest = ids_digest(["chunk-000", "chunk-001"])
        async with uow_factory() as uow:
            assert await uow.reembeddings.finish_batch(rid, 0, "w1", 1, 2, digest)
            assert not await uow.reembeddings.finish_batch(rid, 0, "w1", 1, 2)  # done already
            await uow.commit()
        stored = await self.batches(uow_factory, rid)
        assert stored[0] == attrs.evolve(
            first, status=CopyBatchStatus.DONE, lease_until=None, copied=2, digest=digest
        )
        assert stored[1] == second

    async def test_a_lapsed_lease_is_taken_over_and_the_old_claim_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        rid = uuid.uuid4().hex
        await self.add_batches(uow_factory, split(rid, ["a", "b"], 2))
        old = await self.claim(uow_factory, rid, "w1", T0)
        assert old is not None
        assert await self.claim(uow_factory, rid, "w2", T0 + LEASE / 2) is None
        async with uow_factory() as uow:
            assert await uow.reembeddings.renew_batch(rid, 0, "w1", 1, T0 + LEASE * 2)
            await uow.commit()
        assert await self.claim(uow_factory, rid, "w2", T0 + LEASE) is None  # renewed
        new = await self.claim(uow_factory, rid, "w2", T0 + LEASE * 2)
        assert new is not None and (new.owner, new.claims) == ("w2", 2)
        async with uow_factory() as uow:
            assert not await uow.reembeddings.renew_batch(rid, 0, "w1", 1, T0 + LEASE * 9)
            assert not await uow.reembeddings.finish_batch(rid, 0, "w1", 1, 2)
            assert await uow.reembeddings.finish_batch(rid, 0, "w2", 2, 2)
            await uow.commit()
        (stored,) = await self.batches(uow_factory, rid)
        assert (stored.status, stored.owner, stored.claims) == (CopyBatchStatus.DONE, "w2", 2)

    async def test_concurrent_workers_claim_each_batch_once(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        rid = uuid.uuid4().hex
        made = split(rid, [f"c{n:02d}" for n in range(12)], 2)
        await self.add_batches(uow_factory, made)

        async def worker(name: str) -> list[int]:
            won: list[int] = []
            while (claimed := await self.claim(uow_factory, rid, name, T0)) is not None:
                won.append(claimed.seq)
            return won

        results = await asyncio.gather(*(worker(f"w{i}") for i in range(3)))
        assert sorted(seq for won in results for seq in won) == [b.seq for b in made]
        assert all(b.claims == 1 for b in await self.batches(uow_factory, rid))
