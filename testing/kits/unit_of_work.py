"""Contract kit for the UnitOfWork port itself: one transaction (commit, rollback,
leaving without commit, isolation from other units) and the events it collects on commit.
The repositories have their own kits (see `ragline.testing.kits.persistence`)."""

from __future__ import annotations

import asyncio

import pytest

from ragline.application.ports.repositories.errors import (
    ConcurrentUpdate,
    DatabaseUnavailable,
    PersistenceError,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import FailureCode, ParseRun, Stage
from ragline.testing.kits.persistence import (
    CJK_DETAIL,
    NO_TASK,
    StoreContract,
    at,
    identity,
    pending_run,
    uid,
)


class UnitOfWorkContract(StoreContract):
    """What every UnitOfWork must show; fixture `uow_factory`."""

    async def test_repositories_outside_the_block_fail(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        uow = uow_factory()
        with pytest.raises(PersistenceError):
            await uow.runs.get(uid("never"))

    async def test_leaving_without_commit_rolls_back(self, uow_factory: UnitOfWorkFactory) -> None:
        run = pending_run()
        log_id = uid("log")
        async with uow_factory() as uow:
            await uow.runs.add(run)
            await uow.parsed_logs.add(log_id, NO_TASK, at(0))
        assert await self.get_run(uow_factory, run.task_id) is None
        async with uow_factory() as uow:
            assert await uow.parsed_logs.get(log_id) is None

    async def test_an_exception_rolls_back_and_propagates(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = pending_run()
        with pytest.raises(RuntimeError, match="boom"):
            async with uow_factory() as uow:
                await uow.runs.add(run)
                raise RuntimeError("boom")
        assert await self.get_run(uow_factory, run.task_id) is None

    async def test_rollback_discards_and_the_unit_goes_on(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        dropped, kept = pending_run(), pending_run()
        async with uow_factory() as uow:
            await uow.runs.add(dropped)
            await uow.rollback()
            await uow.runs.add(kept)
            await uow.commit()
        assert await self.get_run(uow_factory, dropped.task_id) is None
        assert await self.get_run(uow_factory, kept.task_id) == kept

    async def test_work_after_commit_needs_its_own_commit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        committed, uncommitted = pending_run(), pending_run()
        async with uow_factory() as uow:
            await uow.runs.add(committed)
            await uow.commit()
            await uow.runs.add(uncommitted)
        assert await self.get_run(uow_factory, committed.task_id) == committed
        assert await self.get_run(uow_factory, uncommitted.task_id) is None

    async def test_uncommitted_work_is_invisible_to_another_unit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = pending_run()
        if self.serializes_transactions:
            # One unit at a time: the other unit can only start once this one is gone.
            async with uow_factory() as uow:
                await uow.runs.add(run)
                other = asyncio.create_task(self.get_run(uow_factory, run.task_id))
                await self.until_queued(uow_factory)
                assert not other.done(), "a second unit of work ran inside the first"
            assert await other is None
            return
        async with uow_factory() as writer:
            await writer.runs.add(run)
            assert await self.get_run(uow_factory, run.task_id) is None
            await writer.commit()
        assert await self.get_run(uow_factory, run.task_id) == run

    # -- the events collected on commit --------------------------------------------------

    async def test_commit_collects_the_events_of_the_runs_it_added_or_saved(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        rejected = ParseRun.open(identity(), at(0))
        rejected.reject(FailureCode.INVALID_TASK_CONTEXT, "file_type 与文件记录不一致", at(1))
        added_events = rejected.pending_events
        assert len(added_events) == 1
        async with uow_factory() as uow:
            await uow.runs.add(rejected)
            assert uow.collect_new_events() == []  # nothing before the commit
            await uow.commit()
            assert rejected.pending_events == ()
            assert uow.collect_new_events() == list(added_events)
            assert uow.collect_new_events() == []  # handed over once
        failing = ParseRun.open(identity(), at(0))
        await self.add_run(uow_factory, failing)
        async with uow_factory() as uow:
            expected = failing.version
            failing.start_stage(Stage.CLEANING, at(1))
            failing.fail_stage(Stage.CLEANING, FailureCode.PARSE_ENGINE_FAILED, CJK_DETAIL, at(2))
            saved_events = failing.pending_events
            assert len(saved_events) == 1
            await uow.runs.save(failing, expected)
            await uow.commit()
            assert failing.pending_events == ()
            assert uow.collect_new_events() == list(saved_events)

    async def test_runs_not_committed_keep_their_events(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = ParseRun.open(identity(), at(0))
        run.reject(FailureCode.INVALID_TASK_CONTEXT, "缺少 source_object_key", at(1))
        events = run.pending_events
        assert len(events) == 1
        async with uow_factory() as uow:
            await uow.runs.add(run)
        assert run.pending_events == events  # left without commit
        async with uow_factory() as uow:
            await uow.runs.add(run)
            await uow.rollback()
            await uow.commit()  # the rollback forgot the run: this commit takes nothing
            assert uow.collect_new_events() == []
        assert run.pending_events == events
        stale = ParseRun.open(identity(), at(0))
        await self.add_run(uow_factory, stale)
        async with uow_factory() as uow:  # another worker moves the row on meanwhile
            other = await uow.runs.get(stale.task_id)
            assert other is not None
            moved_from = other.version
            other.start_stage(Stage.CLEANING, at(1))
            await uow.runs.save(other, moved_from)
            await uow.commit()
        expected = stale.version
        stale.reject(FailureCode.INVALID_TASK_CONTEXT, "过期的版本", at(2))
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(stale, expected)
            await uow.commit()
            assert uow.collect_new_events() == []
        assert len(stale.pending_events) == 1


class UnavailableDatabaseContract:
    """A database that does not answer (closed port, lock held past the busy timeout) is
    DatabaseUnavailable, a DependencyUnavailable the task consumer holds the backlog for,
    never a plain PersistenceError it would dead-letter the message for (issue 19).

    Fixture: `unavailable_uow_factory`, a factory whose database does not answer."""

    @pytest.fixture
    def unavailable_uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass: a factory over a database that does not answer")

    async def test_a_database_that_does_not_answer_is_unavailable(
        self, unavailable_uow_factory: UnitOfWorkFactory
    ) -> None:
        with pytest.raises(DatabaseUnavailable) as raised:
            async with unavailable_uow_factory() as uow:
                await uow.runs.get(uid("task"))
                await uow.commit()
        assert raised.value.dependency == "database"
        assert isinstance(raised.value, PersistenceError)  # callers of the store error too
