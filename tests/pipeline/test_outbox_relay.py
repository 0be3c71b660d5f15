"""OutboxRelay: publish with backoff, dead-letter after N attempts, lose nothing on a crash."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from ragline.adapters.wire_format.json import JsonResultPublisher
from ragline.application.pipeline.outbox_relay import OutboxRelay, RelayPolicy
from ragline.application.ports.repositories.errors import PersistenceError
from tests.fakes.harness import Harness, decode_result
from tests.fakes.messaging import FakePublisher


async def _one_result(h: Harness) -> str:
    task = h.task()
    await h.pipeline.handle(task)
    return task.task_id


async def test_published_once_and_marked_sent(h: Harness) -> None:
    task_id = await _one_result(h)
    report = await h.relay.relay_once()
    assert report.sent == 1
    (published,) = h.publisher.published
    assert published[0] == task_id
    assert decode_result(published[1]).task_id == task_id
    assert h.db.outbox[task_id].status == "SENT"
    assert (await h.relay.relay_once()).sent == 0


async def test_publisher_failing_twice_is_retried_with_backoff(h: Harness) -> None:
    task_id = await _one_result(h)
    h.publisher.fail_next(2)
    assert (await h.relay.relay_once()).retried == 1
    row = h.db.outbox[task_id]
    assert row.attempts == 1 and row.last_error and "broker said no" in row.last_error
    first_wait = row.next_attempt_at - h.clock.current
    assert (await h.relay.relay_once()).sent == 0  # not due yet
    h.clock.advance(timedelta(seconds=1))
    assert (await h.relay.relay_once()).retried == 1
    second = h.db.outbox[task_id]
    assert second.attempts == 2
    assert second.next_attempt_at - h.clock.current > first_wait  # backoff grows
    h.clock.advance(timedelta(seconds=2))
    assert (await h.relay.relay_once()).sent == 1
    assert h.db.outbox[task_id].status == "SENT"
    assert len(h.publisher.published) == 1


async def test_after_max_attempts_the_row_is_dead_with_result_notify_failed(h: Harness) -> None:
    dead_letters = FakePublisher()
    relay = OutboxRelay(
        h.db,
        JsonResultPublisher(h.publisher),
        h.clock,
        RelayPolicy(max_attempts=3),
        dead_letters=JsonResultPublisher(dead_letters),
    )
    task_id = await _one_result(h)
    h.publisher.fail_next(None)
    for _ in range(3):
        await relay.relay_once()
        h.clock.advance(timedelta(minutes=10))
    row = h.db.outbox[task_id]
    assert row.status == "DEAD" and row.attempts == 3
    assert row.last_error is not None and row.last_error.startswith("RESULT_NOTIFY_FAILED:")
    assert [key for key, _ in dead_letters.published] == [task_id]
    assert (await relay.relay_once()).dead == 0  # DEAD rows stay for audit, not retried
    assert h.publisher.attempts == 3


async def test_a_crash_between_commit_and_publish_loses_nothing(h: Harness) -> None:
    task_id = await _one_result(h)  # committed, never published (the process died here)
    fresh = OutboxRelay(h.db, JsonResultPublisher(FakePublisher()), h.clock)
    assert (await fresh.relay_once()).sent == 1
    assert h.db.outbox[task_id].status == "SENT"


async def test_a_crash_between_publish_and_mark_sent_publishes_again(h: Harness) -> None:
    task_id = await _one_result(h)
    h.faults.arm("uow.outbox.mark_sent", PersistenceError("connection lost"))
    with pytest.raises(PersistenceError):
        await h.relay.relay_once()  # published, then the mark failed: the pass died here
    assert h.db.outbox[task_id].status == "PENDING"
    assert (await h.relay.relay_once()).sent == 0  # still claimed by the pass that died
    h.clock.advance(h.relay.policy.lease)
    assert (await h.relay.relay_once()).sent == 1  # the claim expired: published again
    assert h.db.outbox[task_id].status == "SENT"
    assert [key for key, _ in h.publisher.published] == [task_id, task_id]  # at least once


async def test_a_claim_expires_after_the_lease(h: Harness) -> None:
    task_id = await _one_result(h)
    now = h.clock.now()
    async with h.db() as uow:  # a relay claims the row, then dies without publishing
        (claimed,) = await uow.outbox.claim(now, now + h.relay.policy.lease, "dead-relay/1")
        await uow.commit()
    assert claimed.task_id == task_id and claimed.claimed_by == "dead-relay/1"
    assert (await h.relay.relay_once()).sent == 0
    assert h.publisher.published == []
    h.clock.advance(h.relay.policy.lease)
    assert (await h.relay.relay_once()).sent == 1
    row = h.db.outbox[task_id]
    assert row.status == "SENT" and row.claimed_by is None and row.claimed_until is None


async def test_a_pass_whose_lease_ran_out_publishes_nothing_more(h: Harness) -> None:
    for _ in range(3):
        await _one_result(h)
    h.publisher.on_publish = lambda: h.clock.advance(h.relay.policy.lease)
    report = await h.relay.relay_once()
    assert (report.sent, report.expired) == (1, 2)  # the first publish outlived the lease
    assert len(h.publisher.published) == 1


async def test_two_relays_on_one_store_publish_disjoint_rows(h: Harness) -> None:
    tasks = [await _one_result(h) for _ in range(40)]
    first, second = FakePublisher(), FakePublisher()
    relays = [
        OutboxRelay(h.db, JsonResultPublisher(first), h.clock, RelayPolicy(batch_size=7)),
        OutboxRelay(h.db, JsonResultPublisher(second), h.clock, RelayPolicy(batch_size=7)),
    ]

    async def drain(relay: OutboxRelay) -> None:
        while (await relay.relay_once()).sent:
            pass

    await asyncio.gather(*(drain(relay) for relay in relays))
    one = [key for key, _ in first.published]
    two = [key for key, _ in second.published]
    assert one and two  # both relays worked
    assert not set(one) & set(two)
    assert sorted(one + two) == sorted(tasks)
    assert all(h.db.outbox[t].status == "SENT" for t in tasks)


def test_backoff_is_exponential_and_capped() -> None:
    policy = RelayPolicy(base_delay=timedelta(seconds=1), max_delay=timedelta(seconds=10))
    assert [policy.delay(n).total_seconds() for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


class CountingPauses(OutboxRelay):
    """Records each pause of `run` instead of sleeping; stops after `passes` pauses."""

    def __init__(self, *args: object, passes: int, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pauses: list[float] = []
        self.passes = passes

    async def _pause(self, stop: asyncio.Event, seconds: float) -> None:
        self.pauses.append(seconds)
        if len(self.pauses) >= self.passes:
            stop.set()


async def test_a_database_outage_makes_the_relay_back_off(h: Harness) -> None:
    """Issue 19: ~9.5 failed passes a second per worker during an outage. Now each failed
    pass doubles the pause (jittered to 50-100 %) up to the cap."""
    relay = CountingPauses(h.db, JsonResultPublisher(h.publisher), h.clock, passes=12)
    h.db.answering = False
    await relay.run(asyncio.Event(), poll_seconds=0.1, max_backoff=30.0)
    assert len(relay.pauses) == 12
    for failed, pause in enumerate(relay.pauses):
        base = min(0.1 * 2**failed, 30.0)
        assert base * 0.5 <= pause <= base, (failed, relay.pauses)
    assert sum(relay.pauses) > 12 * 0.1 * 10, "the relay kept polling at its poll interval"


async def test_a_broker_outage_makes_the_relay_back_off_and_a_sent_row_resets_it(
    h: Harness,
) -> None:
    task_id = await _one_result(h)
    relay = CountingPauses(
        h.db, JsonResultPublisher(h.publisher), h.clock, RelayPolicy(max_attempts=50), passes=6
    )
    h.publisher.fail_next(4)

    async def pause(stop: asyncio.Event, seconds: float) -> None:
        await CountingPauses._pause(relay, stop, seconds)
        h.clock.advance(timedelta(hours=1))  # the row is due again at every pass

    relay._pause = pause  # type: ignore[method-assign]
    await relay.run(asyncio.Event(), poll_seconds=0.1)
    failing = relay.pauses[:4]
    for failed, seconds in enumerate(failing):  # four failed publishes: growing pauses
        assert 0.1 * 2**failed * 0.5 <= seconds <= 0.1 * 2**failed, relay.pauses
    assert h.db.outbox[task_id].status == "SENT"
    assert relay.pauses[4:] == [0.1, 0.1]  # sent, then idle: back to the poll interval
