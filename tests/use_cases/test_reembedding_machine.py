"""A Hypothesis machine over the re-embedding use cases on the fakes (issue 21): workers step
at random times, some claim a batch and die, documents land for both tenants (into the
active generation only: the range re-read must catch them up), cancels and new plans. A
run may also land inside a swap, between its chunk listing and its commit, counted as
VECTORIZING counts itself (with the count left out, the machine finds P1 broken).

After every step: search's generation (the user's active one) holds every enabled child
with a vector of that user, at that generation's dimension (P1); a cancelled or failed
generation is empty (P4); tenant B, never re-embedded, keeps exactly its own points."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import attrs
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ragline.application.ports.vector_index import ChunkPayload, DensePoint, VectorSpace
from ragline.application.reembedding import AlreadyReembedding, Reembeddings
from ragline.domain.parse_run import BEGIN_INDEXING, COMPLETE
from ragline.domain.reembedding import CopyBatch, EmbeddingSpec, Reembedding, ReembeddingStatus
from ragline.testing.kits.persistence import children, chunk_set, scope
from tests.fakes.indexes import FakeVectorIndex
from tests.fakes.models import FakeEmbedderResolver
from tests.fakes.unit_of_work import FakeDatabase

T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
OLD = 4


@attrs.frozen
class SwapWithALateRun(Reembeddings):
    """Reembeddings whose swap, once armed, has a run land between its chunk listing and its
    commit (the race `vectorizing_starts` closes): `late_run` runs right after `_missing`."""

    late_run: list[Callable[[], Awaitable[None]]] = attrs.Factory(list)

    async def _missing(self, item: Reembedding, batches: list[CopyBatch]) -> list[str]:
        found = await super()._missing(item, batches)
        if item.status is ReembeddingStatus.READY and self.late_run:
            await self.late_run.pop()()
        return found


class ReembeddingUseCaseMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.db = FakeDatabase()
        self.index = FakeVectorIndex(dimension=OLD)
        self.dimensions: dict[int, int] = {0: OLD}
        self.use = SwapWithALateRun(
            self.db,
            self.index,
            FakeEmbedderResolver(),
            batch_size=2,
            lease=timedelta(seconds=10),
        )
        self.now = T0
        self.plans = 0
        self.ended: list[tuple[int, int]] = []  # (generation, dimension) cancelled or failed

    def teardown(self) -> None:
        self.loop.close()

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    async def _active_space(self, user: str) -> VectorSpace:
        async with self.db() as uow:
            gens = await uow.reembeddings.generations(user)
        return VectorSpace(gens.active, self.dimensions[gens.active])

    async def _required(self, user: str) -> set[str]:
        async with self.db() as uow:
            rows = await uow.chunks.list_user_children(user, limit=10_000)
        return {c.chunk_id for c in rows}

    def points(self, space: VectorSpace, user: str) -> dict[str, int]:
        index = self.index if space.generation == 0 else self.index.spaces.get(space)
        if index is None:
            return {}
        return {k[2]: len(p.vector or []) for k, p in index.points.items() if k[0] == user}

    async def land(self, user: str) -> None:
        """A document's run, as VECTORIZING orders it: its start counted while a shadow is
        open, the target read, the points written, then its rows live at SUCCESS."""
        where = scope(user)
        records = chunk_set(where, "t1", parents=1, per_parent=2)
        ids = [c.chunk_id for c in children(records)]
        async with self.db() as uow:
            if (await uow.reembeddings.generations(user)).shadow is not None:
                await uow.reembeddings.note_vectorizing(user)
                await uow.commit()
        space = await self._active_space(user)
        target = await self.index.in_space(space)
        await target.upsert_dense(
            [
                DensePoint(
                    i,
                    [1.0] + [0.0] * (space.dimension - 1),
                    ChunkPayload(user, where.dataset_id, where.doc_id, "p"),
                )
                for i in ids
            ]
        )
        async with self.db() as uow:
            await uow.chunks.replace_document(where, records)
            await uow.chunks.move_dense(where, ids, BEGIN_INDEXING)
            await uow.chunks.move_dense(where, ids, COMPLETE)
            await uow.commit()

    @rule(user=st.sampled_from(["A", "B"]))
    def a_run_lands(self, user: str) -> None:
        """A document reaches SUCCESS between two worker steps."""
        self.run(self.land(user))

    @rule()
    def a_run_will_land_inside_the_next_swap(self) -> None:
        """Armed: the next swap's chunk listing is followed by a whole run of A."""
        if not self.use.late_run:
            self.use.late_run.append(lambda: self.land("A"))

    @rule(dimension=st.integers(2, 6))
    def plan(self, dimension: int) -> None:
        self.plans += 1
        try:
            item = self.run(
                self.use.plan(
                    f"r{self.plans}",
                    "A",
                    EmbeddingSpec("fake", f"m{dimension}", dimension),
                    self.now,
                    source_dimension=self.run(self._active_space("A")).dimension,
                )
            )
        except AlreadyReembedding:
            return
        self.dimensions[item.target_generation] = dimension

    @rule(worker=st.sampled_from(["w1", "w2"]))
    def step(self, worker: str) -> None:
        self.run(self.use.step(worker, self.now))
        for item in self.db.reembeddings.values():
            event(f"seen {item.status.value}")

    @rule()
    def a_worker_claims_and_dies(self) -> None:
        async def die() -> None:
            async with self.db() as uow:
                for item in await uow.reembeddings.list_active():
                    await uow.reembeddings.claim_batch(
                        item.id, "dead", self.now, self.now + self.use.lease
                    )
                await uow.commit()

        self.run(die())

    @rule(seconds=st.integers(1, 15))
    def time_passes(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)

    @precondition(lambda self: self.plans > 0)
    @rule(rarely=st.integers(0, 3))
    def cancel(self, rarely: int) -> None:
        if rarely:
            return  # cancels are rare, or few copies would ever reach the swap

        async def cancel() -> None:
            async with self.db() as uow:
                active = await uow.reembeddings.active_for("A")
            if active is not None:
                await self.use.cancel(active.id, "A", self.now)
                self.ended.append((active.target_generation, active.target.dimension))

        self.run(cancel())

    @invariant()
    def search_answers_from_one_complete_generation(self) -> None:
        for user in ("A", "B"):
            space = self.run(self._active_space(user))
            points = self.points(space, user)
            lost = self.run(self._required(user)) - set(points)
            assert not lost, f"P1: {user}'s generation {space.generation} lacks {sorted(lost)}"
            assert set(points.values()) <= {space.dimension}, "P1: mixed spaces"

    @invariant()
    def ended_generations_are_empty(self) -> None:
        for generation, dimension in self.ended:
            assert not self.points(VectorSpace(generation, dimension), "A"), "P4"

    @invariant()
    def tenant_b_is_untouched(self) -> None:
        assert set(self.points(VectorSpace(0, OLD), "B")) == self.run(self._required("B"))
        assert not self.db.generations.get("B")

    @invariant()
    def progress_is_bounded(self) -> None:
        for item in self.db.reembeddings.values():
            assert 0 <= item.done <= item.total
            if item.status is ReembeddingStatus.SWAPPED:
                assert item.done == item.total


TestReembeddingUseCases = ReembeddingUseCaseMachine.TestCase
TestReembeddingUseCases.settings = settings(max_examples=100, stateful_step_count=40)
