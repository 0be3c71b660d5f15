"""Message-bus ports: consume parse tasks, publish results, drop tasks (debug/CLI path).

Vendor-neutral on purpose: bodies are bytes (UTF-8 JSON per contracts.wire), routing keys are
strings, settlement is `ack` or `dead_letter(reason)`. Delivery is at-least-once; the use case
is idempotent on task_id, so a redelivery after a crash is expected and harmless.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol


class MessageBusError(Exception):
    """The broker could not do what was asked (connection lost, publish not confirmed, ...)."""


class TaskDelivery(Protocol):
    """One received message, unsettled until `ack` or `dead_letter` is awaited.

    Settling twice is a no-op (the first settlement wins). A delivery that is never settled
    is delivered again after the source is closed and reopened (consumer restart).
    """

    @property
    def body(self) -> bytes: ...

    @property
    def routing_key(self) -> str | None:
        """file_type for tasks, task_id for results; None when the producer set none."""
        ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def topic(self) -> str: ...

    async def ack(self) -> None:
        """Done with it (success or a FAILED result already stored): never deliver it again."""
        ...

    async def dead_letter(self, reason: str) -> None:
        """Set it aside on the dead-letter topic with `reason`, then settle it."""
        ...


class TaskSource(Protocol):
    """The task topic, seen by one consumer (group member). Iterating waits for messages."""

    def __aiter__(self) -> AsyncIterator[TaskDelivery]: ...

    async def close(self) -> None:
        """Stop consuming: iteration ends; unsettled deliveries will be delivered again."""
        ...


DEAD_LETTER_REASON_HEADER = "x-dead-letter-reason"
"""Why a message was set aside (contracts.wire.topics spells the same names)."""
DEAD_LETTER_ORIGIN_HEADER = "x-dead-letter-origin"
"""The topic it was consumed from, or meant for."""
DEAD_LETTER_ATTEMPTS_HEADER = "x-dead-letter-attempts"
"""How many publishes failed before a result was given up (the relay's dead letters)."""


class Publisher(Protocol):
    """One topic's publishing end: the result topic (routing key = task_id) for the outbox
    relay, the task topic (routing key = file_type) for the CLI and the debug endpoint."""

    async def publish(
        self, body: bytes, routing_key: str, headers: Mapping[str, str] | None = None
    ) -> None:
        """Return once the broker has durably accepted it (with `headers`, as text, where
        given); raise MessageBusError otherwise."""
        ...


class MessageBus(Protocol):
    """The few endpoints ragline needs on the broker MQ_VENDOR chooses.

    Task topic: workers consume it (one consumer group); the CLI/HTTP debug path publishes
    to it. Result topic: the outbox relay publishes to it (and its dead letters);
    `result_reader` is for tests, benchmarks and inspection only: `ragline ingest` and
    `ragline retry` read their runs' state from the database, so ragline leaves no queue
    on the result topic that would make every result routable.
    Each publisher method returns the same publisher every time (one per role); `close()`
    closes them.
    """

    def task_source(self, *, in_flight: int = 1) -> TaskSource:
        """A member of the workers' group that will hold up to `in_flight` deliveries
        unsettled at once (the broker's prefetch where it has one)."""
        ...

    def task_publisher(self) -> Publisher: ...

    def result_publisher(self) -> Publisher: ...

    def result_dead_letters(self) -> Publisher: ...

    def result_reader(self) -> TaskSource: ...

    def task_dead_letters(self) -> TaskSource:
        """A consumer of the task topic's dead letters, for `ragline tasks redrive`: what
        it acks is gone from the dead-letter topic (RabbitMQ: the `<queue>.DLQ` queue;
        Kafka: the DLQ topic, committed by its own group; in-process: its own group)."""
        ...

    @property
    def in_process(self) -> bool:
        """True when only this process can reach the bus (a worker must run here)."""
        ...

    async def probe(self) -> str:
        """Whether the broker answers, in words (raises when it does not)."""
        ...

    async def close(self) -> None:
        """Close every publisher this bus handed out (flushing what they hold), at
        shutdown; the bus hands out no more afterwards. Sources are closed by whoever
        consumes them."""
        ...
