"""RedriveTaskDeadLetters: what `ragline tasks redrive` and `POST /api/v1/tasks/redrive` call.

A task dead letter is a message the consumer set aside (unreadable, DUPLICATE_TASK, an
INTERNAL_UNKNOWN_ERROR) or one the broker rejected; it was never answered by a run, or was
answered FAILED. Redriving publishes it to the task topic again (body, routing key and its
own headers, without the dead-letter ones) and only then acks it on the dead-letter topic:
a crash in between redrives it twice, which the pipeline's idempotency on task_id absorbs.
It stops after `limit`, once no dead letter arrives for `idle_seconds`, or at the first one
it already redrove in this call (set aside again meanwhile: its own fault).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging

import attrs

from ragline.application.ports.messaging import MessageBus, TaskDelivery
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.wire_format import WireFormat

log = logging.getLogger(__name__)

_DEAD_LETTER_HEADERS = ("x-dead-letter", "x-death", "x-first-death")


@attrs.frozen
class TaskRedriveReport:
    redriven: list[str] = attrs.field(factory=list)  # task_ids ("" when unreadable)


class RedriveTaskDeadLetters:
    def __init__(
        self,
        bus: MessageBus,
        wire: WireFormat,
        metrics: PipelineMetrics = NO_METRICS,
        *,
        first_seconds: float = 15.0,
        idle_seconds: float = 2.0,
    ) -> None:
        """`first_seconds`: how long to wait for the first one (a Kafka group must join)."""
        self.bus = bus
        self.wire = wire
        self.metrics = metrics
        self.first_seconds = first_seconds
        self.idle_seconds = idle_seconds

    async def __call__(self, limit: int = 1000) -> TaskRedriveReport:
        source = self.bus.task_dead_letters()
        publisher = self.bus.task_publisher()
        redriven: list[str] = []
        seen: set[bytes] = set()
        try:
            letters = aiter(source)
            while len(redriven) < limit:
                first = not redriven and not self.bus.in_process  # nothing to join in-process
                wait = self.first_seconds if first else self.idle_seconds
                try:
                    letter = await asyncio.wait_for(anext(letters), wait)
                except (TimeoutError, StopAsyncIteration):
                    break
                digest = hashlib.sha256(letter.body).digest()
                if digest in seen:  # dead-lettered again meanwhile: leave it there
                    break
                seen.add(digest)
                await publisher.publish(letter.body, letter.routing_key or "", _own(letter))
                await letter.ack()
                redriven.append(self.wire.decode_task(letter.body).task_id or "")
        finally:
            await source.close()
        if redriven:
            self.metrics.tasks_redriven(len(redriven))
            log.warning("redrove %d task dead letter(s): %s", len(redriven), ", ".join(redriven))
        return TaskRedriveReport(redriven)


def _own(letter: TaskDelivery) -> dict[str, str]:
    """The message's own headers (the producer's), without what setting it aside added."""
    return {
        name: value
        for name, value in letter.headers.items()
        if not name.lower().startswith(_DEAD_LETTER_HEADERS)
    }
