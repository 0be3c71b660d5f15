"""Contract kit for the messaging ports (TaskSource, Publisher).

Subclass once per bus adapter, in a module pytest collects, and provide the `harness`
fixture: a `MessagingHarness` over a fresh, isolated pair of topics on a real broker.

    class TestMyBus(MessagingContract):
        receive_timeout = 60.0

        @pytest.fixture
        async def harness(self) -> AsyncIterator[MessagingHarness]:
            yield MyHarness(...)

The kit closes every source and publisher it opened (anything with an async `close()`).
It never holds more than one unsettled delivery per source, so prefetch 1 is enough.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest

from ragline.application.ports.messaging import (
    MessageBusError,
    Publisher,
    TaskDelivery,
    TaskSource,
)
from ragline.contracts.wire import (
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
    ParseResult,
    ParseTask,
    TaskStatus,
    decode_parse_result,
    decode_parse_task,
    encode_parse_result,
    encode_parse_task,
)

_T = TypeVar("_T")


class MessagingHarness(ABC):
    """What an adapter team provides: endpoints over one isolated task topic + result topic.

    `task_source()` called twice gives two members of the same consumer group (or two
    consumers of the same queue): closing one and opening another is a consumer restart.
    """

    task_topic: str
    result_topic: str

    @abstractmethod
    async def task_source(self) -> TaskSource:
        """A started consumer of the task topic, in this harness's one group / queue."""

    @abstractmethod
    async def task_publisher(self) -> Publisher: ...

    @abstractmethod
    async def result_publisher(self) -> Publisher: ...

    @abstractmethod
    async def result_reader(self) -> TaskSource:
        """A started consumer of everything on the result topic (opened before publishing)."""

    @abstractmethod
    async def dead_letter_reader(self) -> TaskSource:
        """A started consumer of the task topic's dead letters (opened after they were sent)."""


def task_body(task_id: str, file_type: str = "pdf", **extra: Any) -> bytes:
    task = ParseTask(
        task_id=task_id,
        original_file_id=1,
        document_parse_task_id=2,
        user_id=3,
        dataset_id=4,
        file_type=file_type,
        source_bucket="kit-bucket",
        source_object_key=f"raw/{task_id}.{file_type}",
        source_filename=f"规范-{task_id}-📄.{file_type}",
        md_bucket="kit-bucket",
        md_object_key=f"parsed/{task_id}.md",
        **extra,
    )
    return encode_parse_task(task)


def result_body(task_id: str, status: TaskStatus = TaskStatus.SUCCESS) -> bytes:
    failed = status is TaskStatus.FAILED
    return encode_parse_result(
        ParseResult(
            task_id=task_id,
            original_file_id=1,
            document_parsed_log_id=7,
            dataset_id=4,
            user_id=3,
            task_status=status,
            parse_finished_at=datetime(2026, 5, 16, 8, 30, tzinfo=UTC),
            failure_reason="PARSE_ENGINE_FAILED:示例" if failed else None,
            user_message="解析失败" if failed else None,
        )
    )


def task_id_of(delivery: TaskDelivery) -> str:
    task_id: str = json.loads(delivery.body)["task_id"]
    return task_id


class Bus:
    """The harness plus bookkeeping: one iterator per source, everything closed at the end."""

    def __init__(self, harness: MessagingHarness, timeout: float) -> None:
        self.harness = harness
        self.timeout = timeout
        self._iterators: dict[int, AsyncIterator[TaskDelivery]] = {}
        self._opened: list[object] = []

    async def source(self) -> TaskSource:
        return self._track(await self.harness.task_source())

    async def tasks(self) -> Publisher:
        return self._track(await self.harness.task_publisher())

    async def results(self) -> Publisher:
        return self._track(await self.harness.result_publisher())

    async def result_reader(self) -> TaskSource:
        return self._track(await self.harness.result_reader())

    async def dead_letter_reader(self) -> TaskSource:
        return self._track(await self.harness.dead_letter_reader())

    async def receive(self, source: TaskSource) -> TaskDelivery:
        iterator = self._iterators.setdefault(id(source), aiter(source))
        try:
            return await asyncio.wait_for(anext(iterator), self.timeout)
        except TimeoutError:
            pytest.fail(f"no delivery within {self.timeout}s")

    async def receive_acked(self, source: TaskSource, count: int) -> list[TaskDelivery]:
        """Receive and ack one at a time: a source may hold back more (prefetch 1)."""
        received = []
        for _ in range(count):
            delivery = await self.receive(source)
            await delivery.ack()
            received.append(delivery)
        return received

    async def close_all(self) -> None:
        for opened in reversed(self._opened):
            close = getattr(opened, "close", None)
            if close is not None:
                await close()

    def _track(self, opened: _T) -> _T:
        self._opened.append(opened)
        return opened


class MessagingContract:
    """The behaviour every message-bus adapter must show."""

    receive_timeout: float = 30.0

    @pytest.fixture
    async def harness(self) -> AsyncIterator[MessagingHarness]:
        raise NotImplementedError("subclass and yield the harness of the adapter under test")
        yield  # pragma: no cover

    @pytest.fixture
    async def bus(self, harness: MessagingHarness) -> AsyncIterator[Bus]:
        bus = Bus(harness, self.receive_timeout)
        try:
            yield bus
        finally:
            await bus.close_all()

    async def test_tasks_arrive_whole_with_their_routing_key(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        sent = {
            "pdf": task_body("t-pdf"),
            "docx": task_body("t-docx", "docx", is_retry=True, previous_task_id="t-old"),
        }
        for file_type, body in sent.items():
            await publisher.publish(body, file_type)
        source = await bus.source()
        received = {}
        for delivery in await bus.receive_acked(source, 2):
            assert delivery.topic == bus.harness.task_topic
            assert isinstance(delivery.routing_key, str)
            received[delivery.routing_key] = delivery.body
        assert received == sent
        decoded = decode_parse_task(received["docx"])
        assert isinstance(decoded, ParseTask)
        assert decoded.source_filename == "规范-t-docx-📄.docx"
        assert decoded.previous_task_id == "t-old"

    async def test_order_is_kept_within_a_routing_key(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        sent = [(f"k-{n}", "pdf" if n % 3 else "docx") for n in range(9)]
        for task_id, file_type in sent:
            await publisher.publish(task_body(task_id, file_type), file_type)
        source = await bus.source()
        received: dict[str, list[str]] = {"pdf": [], "docx": []}
        for delivery in await bus.receive_acked(source, len(sent)):
            assert delivery.routing_key in received
            received[delivery.routing_key].append(task_id_of(delivery))
        for file_type, got in received.items():
            assert got == [task_id for task_id, kind in sent if kind == file_type]

    async def test_an_unsettled_delivery_comes_back_after_a_restart(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        for task_id in ("acked", "dead", "unsettled"):
            await publisher.publish(task_body(task_id), "pdf")
        first = await bus.source()
        acked, dead, unsettled = await self._in_turn(bus, first, 3)
        assert [task_id_of(d) for d in (acked, dead, unsettled)] == ["acked", "dead", "unsettled"]
        await first.close()

        second = await bus.source()
        again = await bus.receive(second)
        assert task_id_of(again) == "unsettled"
        assert again.body == unsettled.body and again.routing_key == "pdf"
        await again.ack()
        await publisher.publish(task_body("after"), "pdf")
        following = await bus.receive(second)
        assert task_id_of(following) == "after", "an acked or dead-lettered message came back"
        await following.ack()

    async def _in_turn(self, bus: Bus, source: TaskSource, count: int) -> list[TaskDelivery]:
        """Receive `count` deliveries, acking the 1st and dead-lettering the 2nd on the way."""
        got = []
        for index in range(count):
            delivery = await bus.receive(source)
            if index == 0:
                await delivery.ack()
            elif index == 1:
                await delivery.dead_letter("kit: settled by dead letter")
            got.append(delivery)
        return got

    async def test_a_dead_letter_keeps_body_key_and_reason(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        body = b'\xff{"task_id": "broken", ' + "原因".encode()
        await publisher.publish(body, "pdf")
        source = await bus.source()
        delivery = await bus.receive(source)
        assert delivery.body == body
        reason = "invalid_utf8: byte 0 — 无法解码"
        await delivery.dead_letter(reason)

        reader = await bus.dead_letter_reader()
        letter = await bus.receive(reader)
        assert letter.body == body
        assert letter.routing_key == "pdf"
        assert letter.headers[DEAD_LETTER_REASON_HEADER] == reason
        assert letter.headers[DEAD_LETTER_ORIGIN_HEADER] == bus.harness.task_topic
        await letter.ack()

    async def test_settling_twice_is_a_no_op(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        for task_id in ("once", "marker", "end"):
            await publisher.publish(task_body(task_id), "pdf")
        source = await bus.source()
        once = await bus.receive(source)
        await asyncio.gather(once.ack(), once.ack())  # concurrent double settlement too
        await once.ack()
        await once.dead_letter("must not be dead-lettered after its ack")
        marker = await bus.receive(source)
        assert task_id_of(marker) == "marker"
        await asyncio.gather(marker.dead_letter("marker"), marker.dead_letter("marker again"))
        await marker.ack()
        end = await bus.receive(source)
        assert task_id_of(end) == "end"
        await end.dead_letter("end")

        reader = await bus.dead_letter_reader()
        letters = await bus.receive_acked(reader, 2)
        assert [task_id_of(letter) for letter in letters] == ["marker", "end"], (
            "a settled delivery was dead-lettered, or one was dead-lettered twice"
        )
        assert letters[0].headers[DEAD_LETTER_REASON_HEADER] == "marker"

    async def test_results_are_routed_by_task_id(self, bus: Bus) -> None:
        reader = await bus.result_reader()
        publisher = await bus.results()
        task_ids = [f"r-{uuid.uuid4().hex[:8]}" for _ in range(3)]
        statuses = [TaskStatus.SUCCESS, TaskStatus.FAILED, TaskStatus.SUCCESS]
        for task_id, status in zip(task_ids, statuses, strict=True):
            await publisher.publish(result_body(task_id, status), task_id)
        by_key = {}
        for delivery in await bus.receive_acked(reader, 3):
            assert delivery.topic == bus.harness.result_topic
            result = decode_parse_result(delivery.body)
            assert delivery.routing_key == result.task_id
            by_key[result.task_id] = result.task_status
        assert by_key == dict(zip(task_ids, statuses, strict=True))

    async def test_close_ends_iteration_and_unsettles(self, bus: Bus) -> None:
        publisher = await bus.tasks()
        await publisher.publish(task_body("held"), "pdf")
        source = await bus.source()
        held = await bus.receive(source)
        waiting = asyncio.create_task(bus.receive(source))
        await asyncio.sleep(0.2)
        await source.close()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiting, bus.timeout)
        with pytest.raises(MessageBusError):
            await held.ack()
        again = await bus.receive(await bus.source())
        assert task_id_of(again) == "held"
        await again.ack()
