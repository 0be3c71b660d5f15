"""Contract kit for the parse-run repository (`uow.runs`): the ParseRun aggregate
round-trips in every state, saves are version compare-and-sets, supersede is arbitrated by
rowcount (the retry race), heartbeats and the stale-run sweep, listing and paging."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from ragline.application.ports.repositories.errors import (
    ConcurrentUpdate,
    DuplicateTaskId,
    PersistenceError,
)
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import (
    FailureCode,
    FailurePoint,
    FailureReason,
    ParseRun,
    PipelineStatus,
    RetryRefusal,
    Stage,
    StageStatus,
    retry_refusal,
)
from ragline.testing.kits.persistence import (
    MD,
    RUN_STATES,
    StoreContract,
    at,
    failed_mid_run,
    identity,
    long_reason_run,
    pending_run,
    processing_run,
    run_until_failed_at,
    succeeded_run,
    uid,
)


class ParseRunRepositoryContract(StoreContract):
    """What every ParseRunRepository must show; fixture `uow_factory`."""

    async def _contend(
        self,
        factory: UnitOfWorkFactory,
        previous_id: str,
        new_id: str,
        barrier: asyncio.Barrier | None,
    ) -> tuple[bool, RetryRefusal | None]:
        """One retry, as the use case runs it: read, supersede by CAS, write the new run.
        Returns whether it won and what the domain check said on the snapshot it read."""
        async with factory() as uow:
            previous = await uow.runs.get(previous_id)
            assert previous is not None
            refusal = retry_refusal(previous, new_id)
            if barrier is not None:
                await asyncio.wait_for(barrier.wait(), timeout=30)
            won = await uow.runs.mark_superseded(previous_id, new_id)
            if won:
                assert refusal is None
                previous.supersede(new_id)
                await uow.runs.add(previous.derive_retry(new_id, at(100)))
                await uow.commit()
                return True, refusal
            await uow.rollback()
            loser = ParseRun.retry_loser(
                identity(new_id), previous_id, RetryRefusal.CONCURRENT_SUPERSEDE, at(100)
            )
            await uow.runs.add(loser)
            await uow.commit()
            return False, refusal

    @pytest.mark.parametrize("state", sorted(RUN_STATES))
    async def test_run_round_trips_in_every_state(
        self, uow_factory: UnitOfWorkFactory, state: str
    ) -> None:
        run = RUN_STATES[state]()
        await self.add_run(uow_factory, run)
        stored = await self.get_run(uow_factory, run.task_id)
        assert stored == run
        assert stored is not None
        assert stored.pending_events == ()
        assert list(stored.stages) == list(Stage)
        for when in (stored.created_at, stored.started_at, stored.finished_at):
            assert when is None or when.utcoffset() == timedelta(0)

    async def test_failure_reason_text_survives_exactly(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = long_reason_run()
        await self.add_run(uow_factory, run)
        stored = await self.get_run(uow_factory, run.task_id)
        assert stored is not None and stored.failure_reason is not None
        assert run.failure_reason is not None
        assert stored.failure_reason.text == run.failure_reason.text
        assert len(stored.failure_reason.text) == 512
        assert stored.failure_reason == FailureReason.parse(run.failure_reason.text)

    async def test_unknown_run_is_none(self, uow_factory: UnitOfWorkFactory) -> None:
        assert await self.get_run(uow_factory, uid("missing")) is None

    async def test_duplicate_task_id_is_refused_and_the_transaction_goes_on(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        first = pending_run()
        await self.add_run(uow_factory, first)
        other = pending_run()
        async with uow_factory() as uow:
            with pytest.raises(DuplicateTaskId) as raised:
                await uow.runs.add(ParseRun.open(first.identity, at(99)))
            assert raised.value.task_id == first.task_id
            await uow.runs.add(other)  # the same transaction is still usable
            await uow.commit()
        assert await self.get_run(uow_factory, first.task_id) == first
        assert await self.get_run(uow_factory, other.task_id) == other

    async def test_save_writes_the_new_state_and_a_stale_save_is_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = pending_run()
        await self.add_run(uow_factory, run)
        stale = await self.get_run(uow_factory, run.task_id)
        assert stale is not None

        async with uow_factory() as uow:
            current = await uow.runs.get(run.task_id)
            assert current is not None
            loaded = current.version
            current.start_stage(Stage.CLEANING, at(1))
            current.succeed_stage(Stage.CLEANING, at(2), duration_ms=1000, markdown=MD)
            await uow.runs.save(current, loaded)
            await uow.commit()
        assert await self.get_run(uow_factory, run.task_id) == current

        stale.reject(FailureCode.INVALID_TASK_CONTEXT, "late", at(3))
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(stale, 0)
        assert await self.get_run(uow_factory, run.task_id) == current

    async def test_save_of_a_missing_run_is_a_concurrent_update(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = pending_run()
        run.start_stage(Stage.CLEANING, at(1))
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(run, 0)

    async def test_save_must_carry_a_newer_version(self, uow_factory: UnitOfWorkFactory) -> None:
        run = pending_run()
        await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            with pytest.raises(ValueError):
                await uow.runs.save(run, run.version)  # unchanged: the row would not change
            run.start_stage(Stage.CLEANING, at(1))
            await uow.runs.save(run, run.version - 1)
            await uow.commit()
        assert await self.get_run(uow_factory, run.task_id) == run

    async def test_naive_datetimes_are_refused(self, uow_factory: UnitOfWorkFactory) -> None:
        run = ParseRun.open(identity(), datetime(2026, 1, 1))
        async with uow_factory() as uow:
            with pytest.raises(PersistenceError):
                await uow.runs.add(run)
        assert await self.get_run(uow_factory, run.task_id) is None

    async def test_mark_superseded_only_once_only_failed_and_bumps_version(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        failed = run_until_failed_at(Stage.CHUNKING)
        processing = processing_run()
        for run in (failed, processing):
            await self.add_run(uow_factory, run)
        first, second = uid("retry"), uid("retry")
        async with uow_factory() as uow:
            assert await uow.runs.mark_superseded(processing.task_id, first) is False
            assert await uow.runs.mark_superseded(uid("missing"), first) is False
            assert await uow.runs.mark_superseded(failed.task_id, first) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.mark_superseded(failed.task_id, second) is False
        stored = await self.get_run(uow_factory, failed.task_id)
        assert stored is not None
        assert stored.superseded_by_task_id == first
        assert stored.version == failed.version + 1
        # A stale aggregate (loaded before the mark) can no longer overwrite the row.
        failed.supersede(second)
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(failed, failed.version - 1)

    async def test_list_unfinished_and_recent(self, uow_factory: UnitOfWorkFactory) -> None:
        future = datetime(2300, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        runs = []
        for offset, build in enumerate(
            (pending_run, processing_run, succeeded_run, failed_mid_run)
        ):
            run = build()
            run.created_at = future + timedelta(seconds=offset)
            runs.append(run)
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            recent = await uow.runs.list_recent(limit=4)
            unfinished = await uow.runs.list_unfinished(limit=100_000)
        assert [r.task_id for r in recent] == [r.task_id for r in reversed(runs)]
        assert recent[0] == runs[-1]
        unfinished_ids = [r.task_id for r in unfinished]
        assert runs[0].task_id in unfinished_ids and runs[1].task_id in unfinished_ids
        assert runs[2].task_id not in unfinished_ids and runs[3].task_id not in unfinished_ids
        assert all(not r.is_terminal for r in unfinished)

    async def test_heartbeats_and_stale_runs(self, uow_factory: UnitOfWorkFactory) -> None:
        """Heartbeats live outside the aggregate (no version bump); a run is stale when its
        heartbeat, or its created_at before the first, is older than the cut-off; the
        sweep's claim is a compare-and-set on that."""
        base = datetime(1975, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        working, waiting, done = processing_run(), pending_run(), succeeded_run()
        for offset, run in enumerate((working, waiting, done)):
            run.created_at = base + timedelta(seconds=offset)
            await self.add_run(uow_factory, run)
        cutoff = base + timedelta(seconds=10)
        async with uow_factory() as uow:
            stale = await uow.runs.list_stale(cutoff, limit=100_000)
        assert working.task_id in stale and waiting.task_id in stale
        assert stale.index(working.task_id) < stale.index(waiting.task_id)
        assert done.task_id not in stale
        async with uow_factory() as uow:
            assert await uow.runs.heartbeat(working.task_id, cutoff + timedelta(seconds=10))
            assert await uow.runs.heartbeat(done.task_id, cutoff) is False  # terminal
            assert await uow.runs.heartbeat(uid("missing"), cutoff) is False
            await uow.commit()
        async with uow_factory() as uow:
            stale = await uow.runs.list_stale(cutoff, limit=100_000)
            assert working.task_id not in stale and waiting.task_id in stale
            assert await uow.runs.claim_stale(working.task_id, cutoff, cutoff) is False
            claimed_at = cutoff + timedelta(seconds=20)
            assert await uow.runs.claim_stale(waiting.task_id, cutoff, claimed_at) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.claim_stale(waiting.task_id, cutoff, claimed_at) is False
            assert waiting.task_id not in await uow.runs.list_stale(cutoff, limit=100_000)
            stored = await uow.runs.get(working.task_id)
            assert stored == working  # the heartbeat is not part of the aggregate
            assert stored is not None
            expected = stored.version
            stored.converge_interrupted(cutoff, "no heartbeat")
            await uow.runs.save(stored, expected)  # the heartbeat bumped no version
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.heartbeat(working.task_id, cutoff) is False  # now FAILED
            assert working.task_id not in await uow.runs.list_stale(
                cutoff + timedelta(days=1), limit=100_000
            )

    async def test_list_page_filters_pages_and_counts(self, uow_factory: UnitOfWorkFactory) -> None:
        user, other = uid("u"), uid("u")
        mine = [
            self._run_of(succeeded_run, user, "d1", "doc-a", 10),
            self._run_of(failed_mid_run, user, "d1", "doc-b", 20),
            self._run_of(succeeded_run, user, "d2", "doc-c", 30),
            self._run_of(pending_run, user, "d1", "doc-d", 40),
        ]
        for run in [*mine, self._run_of(succeeded_run, other, "d1", "doc-a", 50)]:
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            every = await uow.runs.list_page(RunQuery(user_id=user))
            first = await uow.runs.list_page(RunQuery(user_id=user), offset=0, limit=3)
            second = await uow.runs.list_page(RunQuery(user_id=user), offset=3, limit=3)
            d1 = await uow.runs.list_page(RunQuery(user_id=user, dataset_id="d1"))
            done = await uow.runs.list_page(RunQuery(user_id=user, status=PipelineStatus.SUCCESS))
            nobody = await uow.runs.list_page(RunQuery(user_id=uid("u")))
            doc_a = await uow.runs.list_page(RunQuery(user_id=user, doc_id="doc-a"))
        assert [r.task_id for r in every.runs] == [r.task_id for r in reversed(mine)]
        assert every.total == first.total == second.total == 4
        assert [r.task_id for r in first.runs + second.runs] == [r.task_id for r in every.runs]
        assert len(first.runs) == 3 and len(second.runs) == 1
        assert every.runs[0] == mine[-1]
        assert {r.task_id for r in d1.runs} == {mine[0].task_id, mine[1].task_id, mine[3].task_id}
        assert d1.total == 3
        assert {r.task_id for r in done.runs} == {mine[0].task_id, mine[2].task_id}
        assert nobody.runs == [] and nobody.total == 0
        assert [r.task_id for r in doc_a.runs] == [mine[0].task_id] and doc_a.total == 1

    async def test_two_concurrent_retries_exactly_one_wins(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        for _ in range(self.race_rounds):
            previous = run_until_failed_at(Stage.CHUNKING)
            await self.add_run(uow_factory, previous)
            contenders = [uid("retry-a"), uid("retry-b")]
            barrier = None if self.serializes_transactions else asyncio.Barrier(2)
            results = await asyncio.gather(
                *(self._contend(uow_factory, previous.task_id, c, barrier) for c in contenders)
            )
            outcomes = [won for won, _ in results]
            assert sorted(outcomes) == [False, True], outcomes
            if barrier is not None:
                # A real race: both read the run as retryable before either wrote, so only
                # the storage compare-and-set told them apart.
                assert [refusal for _, refusal in results] == [None, None]
            winner, loser = contenders if outcomes[0] else list(reversed(contenders))
            async with uow_factory() as uow:
                old = await uow.runs.get(previous.task_id)
                won = await uow.runs.get(winner)
                lost = await uow.runs.get(loser)
            assert old is not None and won is not None and lost is not None
            assert old.superseded_by_task_id == winner
            assert old.version == previous.version + 1  # superseded exactly once
            assert old.pipeline_status is PipelineStatus.FAILED
            assert won.retry_of_task_id == previous.task_id
            assert won.pipeline_status is PipelineStatus.PENDING
            assert won.stages[Stage.CLEANING].inherited
            assert won.status_of(Stage.CLEANING) is StageStatus.SUCCESS
            assert won.status_of(Stage.CHUNKING) is StageStatus.PENDING
            assert won.markdown == MD
            assert lost.pipeline_status is PipelineStatus.FAILED
            assert lost.failed_stage is FailurePoint.RETRY_VALIDATION
            assert lost.failure_reason == FailureReason.of(
                FailureCode.RETRY_VALIDATION_FAILED, RetryRefusal.CONCURRENT_SUPERSEDE.value
            )
            assert lost.superseded_by_task_id is None

    async def test_two_concurrent_saves_of_one_version_exactly_one_lands(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = pending_run()
        await self.add_run(uow_factory, run)
        barrier = None if self.serializes_transactions else asyncio.Barrier(2)

        async def contender(stage_detail: str) -> ParseRun | None:
            async with uow_factory() as uow:
                current = await uow.runs.get(run.task_id)
                assert current is not None
                loaded = current.version
                if barrier is not None:
                    await asyncio.wait_for(barrier.wait(), timeout=30)
                if current.pipeline_status is not PipelineStatus.PENDING:
                    return None  # serialized store: it already sees the other's write
                current.reject(FailureCode.INVALID_TASK_CONTEXT, stage_detail, at(5))
                try:
                    await uow.runs.save(current, loaded)
                except ConcurrentUpdate:
                    return None
                await uow.commit()
                return current

        landed = [r for r in await asyncio.gather(contender("甲"), contender("乙")) if r]
        assert len(landed) == 1
        assert await self.get_run(uow_factory, run.task_id) == landed[0]
        assert landed[0].version == run.version + 1
