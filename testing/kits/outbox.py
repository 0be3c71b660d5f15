"""Contract kit for the outbox repository (`uow.outbox`): one row per task, marks that
are compare-and-sets on attempts, disjoint claims that expire, redrive, listing, counts."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import TaskStatus
from ragline.testing.kits.persistence import (
    T0,
    StoreContract,
    a_result,
    uid,
)


class OutboxRepositoryContract(StoreContract):
    """What every OutboxRepository must show; fixture `uow_factory`."""

    async def test_outbox_put_due_and_marks_are_compare_and_set(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        base = datetime(2400, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        early, late = uid("task"), uid("task")
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(late), "results", base + timedelta(seconds=2))
            await uow.outbox.put(a_result(early, user_message="结果"), "results", base)
            await uow.commit()
        async with uow_factory() as uow:
            due = [
                m
                for m in await uow.outbox.due(base + timedelta(seconds=1), 100_000)
                if m.task_id in (early, late)
            ]
            later = [m.task_id for m in await uow.outbox.due(base + timedelta(seconds=2), 100_000)]
        assert [m.task_id for m in due] == [early]
        assert later.index(early) < later.index(late)
        message = due[0]
        assert (message.topic, message.routing_key, message.result) == (
            "results",
            early,
            a_result(early, user_message="结果"),
        )
        assert (message.attempts, message.status, message.last_error) == (0, "PENDING", None)
        assert message.next_attempt_at == base

        async with uow_factory() as uow:
            assert await uow.outbox.mark_sent(message.id, attempts=1) is False  # wrong attempts
            retry_at = base + timedelta(minutes=5)
            assert await uow.outbox.mark_retry(message.id, 0, retry_at, "broker down：超时") is True
            assert await uow.outbox.mark_retry(message.id, 0, retry_at, "again") is False
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.outbox.get(early)
            assert stored is not None
            assert (stored.attempts, stored.status) == (1, "PENDING")
            assert (stored.next_attempt_at, stored.last_error) == (retry_at, "broker down：超时")
            assert early not in [
                m.task_id for m in await uow.outbox.due(base + timedelta(minutes=4), 100_000)
            ]
            assert await uow.outbox.mark_sent(stored.id, 1) is True
            assert await uow.outbox.mark_sent(stored.id, 1) is False
            assert await uow.outbox.mark_dead(stored.id, 2, "late") is False  # not PENDING any more
            await uow.commit()
        async with uow_factory() as uow:
            sent = await uow.outbox.get(early)
            assert sent is not None and (sent.status, sent.attempts) == ("SENT", 2)
            assert sent.last_error is None  # sent: the failure before it is no longer the state
            assert early not in [
                m.task_id for m in await uow.outbox.due(base + timedelta(days=1), 100_000)
            ]
            late_message = await uow.outbox.get(late)
            assert late_message is not None
            assert await uow.outbox.mark_dead(late_message.id, 0, "gave up") is True
            await uow.commit()
        async with uow_factory() as uow:
            dead = await uow.outbox.get(late)
            assert dead is not None and (dead.status, dead.attempts, dead.last_error) == (
                "DEAD",
                1,
                "gave up",
            )
            assert await uow.outbox.get(uid("missing")) is None

    async def test_outbox_keeps_one_row_per_task_and_re_put_resends(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task = uid("task")
        second = a_result(task, status=TaskStatus.FAILED)
        base = datetime(2500, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(task), "results", base)
            await uow.commit()
        async with uow_factory() as uow:
            first = await uow.outbox.get(task)
            assert first is not None
            assert await uow.outbox.mark_dead(first.id, 0, "dead-lettered") is True
            await uow.commit()
        async with uow_factory() as uow:
            await uow.outbox.put(second, "results-2", base + timedelta(hours=1))
            await uow.commit()
        async with uow_factory() as uow:
            again = await uow.outbox.get(task)
            due = [
                m
                for m in await uow.outbox.due(base + timedelta(hours=1), 100_000)
                if m.task_id == task
            ]
        assert again is not None
        assert again.id == first.id
        assert (again.status, again.attempts, again.result, again.topic) == (
            "PENDING",
            0,
            second,
            "results-2",
        )
        assert again.last_error is None
        assert [m.id for m in due] == [first.id]

    async def test_outbox_put_rolls_back_with_the_unit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task = uid("task")
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(task), "results", T0)
        async with uow_factory() as uow:
            assert await uow.outbox.get(task) is None

    async def test_outbox_claims_are_disjoint_expire_and_end_with_a_mark(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """Two relays claiming at once get disjoint rows; a claim hides its rows until it
        expires; a mark clears it. (Rows of other tests may be claimed too: only ours are
        asserted on, and disjointness over everything claimed.)"""
        now = datetime(1990, 1, 1, tzinfo=UTC)  # before any other test's rows are due
        lease = timedelta(seconds=60)
        mine = [uid("claim") for _ in range(12)]
        async with uow_factory() as uow:
            for position, task in enumerate(mine):
                due_at = now - timedelta(seconds=position + 1)
                await uow.outbox.put(a_result(task), "results", due_at)
            await uow.commit()
        barrier = None if self.serializes_transactions else asyncio.Barrier(2)

        async def claim(owner: str) -> list[OutboxMessage]:
            async with uow_factory() as uow:
                claimed = await uow.outbox.claim(now, now + lease, owner, limit=5)
                if barrier is not None:
                    await barrier.wait()  # both claims are open at once, neither committed
                await uow.commit()
            return claimed

        first, second = await asyncio.gather(claim(uid("relay-a")), claim(uid("relay-b")))
        assert not {m.id for m in first} & {m.id for m in second}
        claimed_tasks = {m.task_id for m in first + second}
        assert len(claimed_tasks & set(mine)) == 10  # 5 + 5 slots; ours are due first
        assert all(m.claimed_until == now + lease for m in first + second)
        assert {m.claimed_by for m in first} == {first[0].claimed_by}
        async with uow_factory() as uow:
            rest = await uow.outbox.claim(now, now + lease, uid("relay-c"), limit=100_000)
            await uow.commit()
        assert {m.task_id for m in rest} & set(mine) == set(mine) - claimed_tasks
        async with uow_factory() as uow:  # under a live claim: nothing of ours
            held = await uow.outbox.claim(now + lease / 2, now + lease, uid("d"), 100_000)
            assert not {m.task_id for m in held} & set(mine)
            stored = await uow.outbox.get(mine[0])
            assert stored is not None and stored.claimed_by is not None
            assert await uow.outbox.mark_retry(stored.id, 0, now + lease * 4, "later") is True
            await uow.commit()
        async with uow_factory() as uow:  # expired: claimable again, the retried row not yet
            again = await uow.outbox.claim(now + lease, now + lease * 2, uid("e"), 100_000)
            await uow.commit()
        assert {m.task_id for m in again} & set(mine) == set(mine[1:])
        async with uow_factory() as uow:
            retried = await uow.outbox.get(mine[0])
            assert retried is not None
            assert (retried.claimed_by, retried.claimed_until) == (None, None)
            for message in again:
                if message.task_id in mine:
                    assert await uow.outbox.mark_sent(message.id, message.attempts) is True
            await uow.commit()
        async with uow_factory() as uow:
            sent = await uow.outbox.get(mine[1])
            assert sent is not None and sent.status == "SENT" and sent.claimed_by is None

    async def test_outbox_redrive_lists_and_counts(self, uow_factory: UnitOfWorkFactory) -> None:
        dead_task, pending_task = uid("dead"), uid("pending")
        async with uow_factory() as uow:
            before = dict(await uow.outbox.count_by_status())
            await uow.outbox.put(a_result(dead_task), "results", T0)
            await uow.outbox.put(a_result(pending_task), "results", T0)
            await uow.commit()
        async with uow_factory() as uow:
            dead_row = await uow.outbox.get(dead_task)
            assert dead_row is not None
            assert await uow.outbox.redrive(dead_task, T0) is False  # PENDING, not DEAD
            assert await uow.outbox.mark_dead(dead_row.id, 0, "RESULT_NOTIFY_FAILED:gone")
            await uow.commit()
        async with uow_factory() as uow:
            counts = await uow.outbox.count_by_status()
            assert counts.get("DEAD", 0) == before.get("DEAD", 0) + 1
            assert counts.get("PENDING", 0) == before.get("PENDING", 0) + 1
            (listed,) = await uow.outbox.list_messages("DEAD", dead_task)
            assert listed.status == "DEAD" and listed.attempts == 1
            assert listed.last_error == "RESULT_NOTIFY_FAILED:gone"
            assert await uow.outbox.list_messages("PENDING", dead_task) == []
            both = await uow.outbox.list_messages(after_id=dead_row.id - 1, limit=100_000)
            assert [m.task_id for m in both][:2] == [dead_task, pending_task]
            page = await uow.outbox.list_messages(after_id=dead_row.id, limit=1)
            assert [m.task_id for m in page] == [pending_task]
            for past in (2**31, 2**63 - 1):  # any after_id a caller may name: nothing after it
                assert await uow.outbox.list_messages(after_id=past) == []
        later = T0 + timedelta(hours=1)
        async with uow_factory() as uow:
            assert await uow.outbox.redrive(dead_task, later) is True
            assert await uow.outbox.redrive(dead_task, later) is False  # already PENDING
            await uow.commit()
        async with uow_factory() as uow:
            redriven = await uow.outbox.get(dead_task)
            assert redriven is not None
            assert (redriven.status, redriven.attempts) == ("PENDING", 0)
            assert redriven.next_attempt_at == later
            assert redriven.last_error == "RESULT_NOTIFY_FAILED:gone"  # kept for the record
            assert dead_task in {m.task_id for m in await uow.outbox.due(later, 100_000)}
            assert await uow.outbox.redrive(uid("missing"), later) is False
