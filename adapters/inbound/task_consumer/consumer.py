"""TaskConsumer: decodes each TaskDelivery once, hands it to the pipeline, and settles it
after the pipeline has committed its outcome.

ack only once the terminal state and its outbox row are committed; a body without a
readable task_id, or whose task_id another task holds (DUPLICATE_TASK), is dead-lettered
with the reason; an exception escaping the pipeline gets a
best-effort FAILED INTERNAL_UNKNOWN_ERROR result, then the message is dead-lettered (SPEC §3).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal, TypeVar

from ragline.application.pipeline.errors import describe
from ragline.application.pipeline.log_context import log_fields
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outcome import PipelineOutcome
from ragline.application.ports.messaging import MessageBusError, TaskDelivery, TaskSource
from ragline.application.ports.wire_format import WireFormat
from ragline.application.tasks import ParseTaskCommand, UnreadableTask, body_text
from ragline.domain.parse_run import FailureCode

log = logging.getLogger(__name__)
T = TypeVar("T")

INTERNAL_ERROR_PREFIX = f"{FailureCode.INTERNAL_UNKNOWN_ERROR.value}:"


def salvage(decoded: ParseTaskCommand | UnreadableTask, body: bytes, detail: str) -> UnreadableTask:
    """What an INTERNAL_UNKNOWN_ERROR run records of a delivery, should none be stored yet."""
    if isinstance(decoded, UnreadableTask):
        return decoded
    return UnreadableTask(
        task_id=decoded.task_id,
        reason=detail,
        body_text=body_text(body),
        original_file_id=str(decoded.original_file_id),
        document_parse_task_id=str(decoded.document_parse_task_id),
        user_id=str(decoded.user_id),
        dataset_id=str(decoded.dataset_id),
        file_type=decoded.file_type[:32],
    )


class TaskConsumer:
    """Decodes each delivery's body, hands it to the pipeline, and settles the delivery."""

    def __init__(self, pipeline: ParseTaskPipeline, wire: WireFormat) -> None:
        self.pipeline = pipeline
        self.wire = wire
        self.metrics = pipeline.services.metrics
        self.tracing = pipeline.services.tracing

    async def handle(self, decoded: ParseTaskCommand | UnreadableTask) -> PipelineOutcome:
        if isinstance(decoded, UnreadableTask):
            return await self.pipeline.reject(decoded)
        return await self.pipeline.handle(decoded)

    async def process(self, delivery: TaskDelivery) -> PipelineOutcome | None:
        """Handle and settle one delivery; None when it was dead-lettered after an error."""
        self.metrics.task_started()
        try:
            return await self._process(delivery)
        finally:
            self.metrics.task_ended()

    async def _process(self, delivery: TaskDelivery) -> PipelineOutcome | None:
        body = delivery.body
        decoded = self.wire.decode_task(body)
        fields = {"task_id": decoded.task_id or ""}
        if isinstance(decoded, ParseTaskCommand):
            fields |= {"user_id": str(decoded.user_id), "dataset_id": str(decoded.dataset_id)}
        attributes = {f"ragline.{name}": value for name, value in fields.items()}
        with log_fields(**fields), self.tracing.span("ragline.run", attributes):
            return await self._settled(delivery, body, decoded)

    async def _settled(
        self, delivery: TaskDelivery, body: bytes, decoded: ParseTaskCommand | UnreadableTask
    ) -> PipelineOutcome | None:
        try:
            outcome = await self.handle(decoded)
        except Exception as error:
            detail = describe(error)
            log.exception("parse task failed unexpectedly: %s", detail)
            task_id = decoded.task_id
            if task_id is not None:
                try:
                    await self.pipeline.fail_internal(
                        task_id, detail, salvage(decoded, body, detail)
                    )
                except Exception:
                    log.exception("could not record INTERNAL_UNKNOWN_ERROR for %s", task_id)
            await _settle(delivery.dead_letter(f"{INTERNAL_ERROR_PREFIX}{detail}"[:512]))
            return None
        if not outcome.settled_by_result:  # unreadable, or its task_id is another task's
            log.warning("dead-lettering a %s task: %s", outcome.kind.value, outcome.detail)
            await _settle(delivery.dead_letter(outcome.detail or f"{outcome.kind.value} task"))
            return outcome
        await _settle(delivery.ack())
        log.info("task settled: %s %s", outcome.kind.value, outcome.detail or "")
        return outcome


class SupervisedConsumer:
    """Cleans the workspace, then consumes task sources until `stop`: a source that fails
    (broker restarted, connection reset, consumer cancelled by the broker) or ends on its own
    is closed and a new one opened after a backoff (1 s doubling to `max_backoff`, back to
    1 s once a delivery arrives). Nothing is lost meanwhile: unsettled deliveries return to
    the broker.

    Up to `concurrency` deliveries of one source are processed at once (the producer keys
    tasks by file_type, so one partition may hold all the work): the next is fetched as soon
    as a slot is free, and the source settles them in any order (Kafka commits below the
    lowest unsettled offset; RabbitMQ acks each). Leaving a source waits for its tasks first.
    """

    def __init__(
        self,
        pipeline: ParseTaskPipeline,
        wire: WireFormat,
        open_source: Callable[[], TaskSource],
        *,
        concurrency: int = 1,
        first_backoff: float = 1.0,
        max_backoff: float = 30.0,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.pipeline = pipeline
        self.consumer = TaskConsumer(pipeline, wire)
        self.open_source = open_source
        self.concurrency = concurrency
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.reconnects = 0
        self._source: TaskSource | None = None
        self._in_flight: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        self.pipeline.start_up()
        backoff = self.first_backoff
        while not stop.is_set():
            source = self._source = self.open_source()
            received = False
            in_flight = self._in_flight = set()
            try:
                async for delivery in _slotted(source, in_flight, self.concurrency, stop):
                    received = True
                    task = asyncio.create_task(self._process(delivery))
                    in_flight.add(task)
                    task.add_done_callback(in_flight.discard)
                reason = "the task source ended"
            except MessageBusError as error:
                reason = describe(error)
            finally:
                if in_flight:  # let them settle while the source is still open
                    await asyncio.wait(set(in_flight))
                with contextlib.suppress(Exception):
                    await source.close()
                self._source = None
            if stop.is_set():
                return
            backoff = self.first_backoff if received else backoff
            log.warning("%s; reopening the task source in %.1f s", reason, backoff)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(backoff * 2, self.max_backoff)
            self.reconnects += 1

    async def _process(self, delivery: TaskDelivery) -> None:
        try:
            await self.consumer.process(delivery)
        except Exception:  # process() already answers pipeline errors; this is a last guard
            log.exception("a task ended with an unexpected error (it will come again)")

    async def close(self) -> None:
        """End the current iteration (call after setting `stop`). With tasks in flight the
        source stays open until they have settled (`stop` already ends the fetching), so a
        SIGTERM does not turn finished tasks into redeliveries."""
        if self._source is not None and not self._in_flight:
            with contextlib.suppress(Exception):
                await self._source.close()


async def _slotted(
    source: TaskSource, in_flight: set[asyncio.Task[None]], limit: int, stop: asyncio.Event
) -> AsyncIterator[TaskDelivery]:
    """The source's deliveries, the next one fetched only once fewer than `limit` run;
    ends when `stop` is set (a fetch under way is abandoned: the broker still owns it)."""
    deliveries = aiter(source)
    while not stop.is_set():
        while len(in_flight) >= limit and not stop.is_set():
            await _first_of({*in_flight}, stop)
        if stop.is_set():
            return
        fetch = asyncio.ensure_future(anext(deliveries))
        await _first_of({fetch}, stop)
        if not fetch.done():
            fetch.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, MessageBusError):
                await fetch
            return
        try:
            yield fetch.result()
        except StopAsyncIteration:
            return


async def _first_of(waiting: set[asyncio.Future[T]], stop: asyncio.Event) -> None:
    """Until one of `waiting` is done or `stop` is set."""
    stopping = asyncio.ensure_future(stop.wait())
    watched: set[asyncio.Future[T] | asyncio.Future[Literal[True]]] = {*waiting, stopping}
    try:
        await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()


async def _settle(settlement: Awaitable[None]) -> None:
    """A lost settlement only means the broker delivers again; the pipeline is idempotent."""
    try:
        await settlement
    except MessageBusError as error:
        log.warning("could not settle a delivery (it will come again): %s", describe(error))
