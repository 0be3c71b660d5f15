"""The messaging kit against the in-process bus (embedded mode), plus its own edges."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from ragline.adapters.messaging.inprocess import (
    InProcessBus,
    InProcessPublisher,
    InProcessTaskSource,
)
from ragline.contracts.wire import dead_letter_topic
from ragline.testing.kits.messaging import MessagingContract, MessagingHarness, task_body


class InProcessHarness(MessagingHarness):
    def __init__(self, bus: InProcessBus) -> None:
        self.bus = bus
        suffix = uuid.uuid4().hex[:8]
        self.task_topic = f"tasks-{suffix}"
        self.result_topic = f"results-{suffix}"

    async def task_source(self) -> InProcessTaskSource:
        return InProcessTaskSource(self.bus, self.task_topic, group="workers")

    async def task_publisher(self) -> InProcessPublisher:
        return InProcessPublisher(self.bus, self.task_topic)

    async def result_publisher(self) -> InProcessPublisher:
        return InProcessPublisher(self.bus, self.result_topic)

    async def result_reader(self) -> InProcessTaskSource:
        return InProcessTaskSource(self.bus, self.result_topic, group="reader")

    async def dead_letter_reader(self) -> InProcessTaskSource:
        return InProcessTaskSource(self.bus, dead_letter_topic(self.task_topic), group="ops")


class TestInProcessBus(MessagingContract):
    receive_timeout = 5.0

    @pytest.fixture
    async def harness(self) -> AsyncIterator[MessagingHarness]:
        yield InProcessHarness(InProcessBus())


async def test_settled_messages_are_released_and_retention_bounds_the_rest() -> None:
    bus = InProcessBus(retention=3)
    publisher = InProcessPublisher(bus, "t")
    for n in range(5):
        await publisher.publish(task_body(f"m{n}"), "pdf")
    assert len(bus.topic("t").records) == 3
    source = InProcessTaskSource(bus, "t", group="g")
    iterator = aiter(source)
    first = await anext(iterator)
    assert b'"m2"' in first.body
    await first.ack()
    assert len(bus.topic("t").records) == 2
    await source.close()


async def test_two_groups_each_get_every_message_and_members_share() -> None:
    bus = InProcessBus()
    publisher = InProcessPublisher(bus, "t")
    for n in range(4):
        await publisher.publish(task_body(f"m{n}"), "pdf")
    a, b = InProcessTaskSource(bus, "t", "g1"), InProcessTaskSource(bus, "t", "g1")
    other = InProcessTaskSource(bus, "t", "g2")
    got_g1 = [await anext(aiter(a)), await anext(aiter(b)), await anext(aiter(a))]
    got_g2 = [await anext(aiter(other)) for _ in range(4)]
    assert len({d.body for d in got_g1}) == 3
    assert [d.body for d in got_g2] == [task_body(f"m{n}") for n in range(4)]
    for delivery in [*got_g1, *got_g2]:
        await delivery.ack()
    assert len(bus.topic("t").records) == 1
