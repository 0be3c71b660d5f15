"""TaskConsumer: decodes each TaskDelivery once, hands it to the pipeline, and settles it
after the pipeline has committed its outcome.

ack only once the terminal state and its outbox row are committed; a body without a
readable task_id, or whose task_id another task holds (DUPLICATE_TASK), is dead-lettered
with the reason; an exception escaping the pipeline gets a
best-effort FAILED INTERNAL_UNKNOWN_ERROR result, then the message is dead-lettered
(docs/design/0001-pipeline-contract.md).

A dependency that does not answer (DependencyUnavailable, e.g. the database) is not the
message's fault: the delivery is left unsettled and the error raised to the
SupervisedConsumer, which stops fetching, closes its source (the broker takes back every
unsettled delivery), probes the dependency with backoff and jitter, and resumes once it
answers (issue 19: a 30 s database outage used to dead-letter the whole backlog).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal, Protocol, TypeVar

from ragline.application.error_text import describe
from ragline.application.pipeline.log_context import log_fields
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outcome import PipelineOutcome
from ragline.application.ports.dependencies import DependencyUnavailable, unavailable_dependency
from ragline.application.ports.messaging import MessageBusError, TaskDelivery, TaskSource
from ragline.application.tasks import ParseTaskCommand, UnreadableTask, body_text
from ragline.domain.parse_run import FailureCode

log = logging.getLogger(__name__)
T = TypeVar("T")

INTERNAL_ERROR_PREFIX = f"{FailureCode.INTERNAL_UNKNOWN_ERROR.value}:"


class TaskDecoder(Protocol):
    """The one decoding of a received body (`ragline.adapters.wire_format.json`): after
    it, the pipeline sees the task as a value only."""

    def decode_task(self, body: bytes) -> ParseTaskCommand | UnreadableTask:
        """A task body as a command, or why it is not one (never raises)."""
        ...


def salvage(decoded: ParseTaskCommand | UnreadableTask, body: bytes, detail: str) -> UnreadableTask:
    """What an INTERNAL_UNKNOWN_ERROR run records of a delivery, should none be stored yet."""
    if isinstance(decoded, UnreadableTask):
        return decoded
    return UnreadableTask(
        task_id=decoded.task_id,
        reason=detail,
        body_text=body_text(body),
        original_file_id=decoded.original_file_id,
        document_parse_task_id=decoded.document_parse_task_id,
        user_id=decoded.user_id,
        dataset_id=decoded.dataset_id,
        file_type=decoded.file_type[:32],
    )


class TaskConsumer:
    """Decodes each delivery's body, hands it to the pipeline, and settles the delivery."""

    def __init__(self, pipeline: ParseTaskPipeline, wire: TaskDecoder) -> None:
        self.pipeline = pipeline
        self.wire = wire
        self.metrics = pipeline.services.metrics
        self.tracing = pipeline.services.tracing

    async def handle(self, decoded: ParseTaskCommand | UnreadableTask) -> PipelineOutcome:
        if isinstance(decoded, UnreadableTask):
            return await self.pipeline.reject(decoded)
        return await self.pipeline.handle(decoded)

    async def process(self, delivery: TaskDelivery) -> PipelineOutcome | None:
        """Handle and settle one delivery; None when it was dead-lettered after an error.
        Raises DependencyUnavailable, the delivery unsettled, when a dependency did not
        answer."""
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
            outage = unavailable_dependency(error)
            if outage is not None:  # not the message's fault: it stays on the broker
                log.warning("task left on the broker: %s", outage)
                self.metrics.task_held(outage.dependency)
                raise outage from error
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

    A task that meets a dependency that does not answer holds the backlog: no further
    delivery is fetched, the source is closed once the tasks in flight have ended (the
    broker takes back what is unsettled), and the dependency is probed after a backoff
    (`first_backoff` doubling to `max_backoff`, each wait jittered to 50-100 %, so workers
    do not probe in step) until it answers; then a new source is opened. `held_for` names
    the dependency while held.
    """

    def __init__(
        self,
        pipeline: ParseTaskPipeline,
        wire: TaskDecoder,
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
        self.holds = 0
        self.held_for: str | None = None
        self._outage: DependencyUnavailable | None = None
        self._hold = asyncio.Event()
        self._source: TaskSource | None = None
        self._in_flight: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        self.pipeline.start_up()
        backoff = self.first_backoff
        while not stop.is_set():
            source = self._source = self.open_source()
            received = False
            in_flight = self._in_flight = set()
            self._hold.clear()
            try:
                async for delivery in _slotted(
                    source, in_flight, self.concurrency, stop, self._hold
                ):
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
            outage, self._outage = self._outage, None
            if outage is not None:
                await self._hold_until_answered(outage, stop)
                backoff = self.first_backoff
                continue
            backoff = self.first_backoff if received else backoff
            log.warning("%s; reopening the task source in %.1f s", reason, backoff)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(backoff * 2, self.max_backoff)
            self.reconnects += 1

    async def _process(self, delivery: TaskDelivery) -> None:
        try:
            await self.consumer.process(delivery)
        except DependencyUnavailable as outage:  # left unsettled: hold the backlog
            self._outage = self._outage or outage
            self._hold.set()
        except Exception:  # process() already answers pipeline errors; this is a last guard
            log.exception("a task ended with an unexpected error (it will come again)")

    async def _hold_until_answered(
        self, outage: DependencyUnavailable, stop: asyncio.Event
    ) -> None:
        """Probe `outage.dependency` after each (jittered, growing) wait until it answers."""
        self.holds += 1
        self.held_for = outage.dependency
        delay, probes = self.first_backoff, 0
        log.warning("holding the task backlog on the broker: %s", outage)
        try:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay * _JITTER.uniform(0.5, 1.0))
                if stop.is_set():
                    return
                probes += 1
                try:
                    await answers(self.pipeline, outage.dependency)
                except Exception as error:
                    log.warning(
                        "%s still unavailable (probe %d): %s",
                        outage.dependency,
                        probes,
                        describe(error),
                    )
                    delay = min(delay * 2, self.max_backoff)
                    continue
                log.warning(
                    "%s answers again after %d probe(s): resuming", outage.dependency, probes
                )
                return
        finally:
            self.held_for = None

    async def close(self) -> None:
        """End the current iteration (call after setting `stop`). With tasks in flight the
        source stays open until they have settled (`stop` already ends the fetching), so a
        SIGTERM does not turn finished tasks into redeliveries."""
        if self._source is not None and not self._in_flight:
            with contextlib.suppress(Exception):
                await self._source.close()


_JITTER = secrets.SystemRandom()


async def answers(pipeline: ParseTaskPipeline, dependency: str) -> None:
    """Raises unless `dependency` answers. The database is asked a read; a dependency
    without a probe here counts as answering (the next task is then the probe)."""
    if dependency == "database":
        async with pipeline.services.uow() as uow:
            await uow.runs.get("ragline-availability-probe")


async def _slotted(
    source: TaskSource,
    in_flight: set[asyncio.Task[None]],
    limit: int,
    stop: asyncio.Event,
    hold: asyncio.Event,
) -> AsyncIterator[TaskDelivery]:
    """The source's deliveries, the next one fetched only once fewer than `limit` run;
    ends when `stop` or `hold` is set (a fetch under way is abandoned: the broker still
    owns it)."""
    deliveries = aiter(source)
    while not (stop.is_set() or hold.is_set()):
        while len(in_flight) >= limit and not (stop.is_set() or hold.is_set()):
            await _first_of({*in_flight}, stop, hold)
        if stop.is_set() or hold.is_set():
            return
        fetch = asyncio.ensure_future(anext(deliveries))
        await _first_of({fetch}, stop, hold)
        if not fetch.done():
            fetch.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, MessageBusError):
                await fetch
            return
        try:
            yield fetch.result()
        except StopAsyncIteration:
            return


async def _first_of(waiting: set[asyncio.Future[T]], *events: asyncio.Event) -> None:
    """Until one of `waiting` is done or one of `events` is set."""
    setting = {asyncio.ensure_future(event.wait()) for event in events}
    watched: set[asyncio.Future[T] | asyncio.Future[Literal[True]]] = {*waiting, *setting}
    try:
        await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in setting:
            waiter.cancel()


async def _settle(settlement: Awaitable[None]) -> None:
    """A lost settlement only means the broker delivers again; the pipeline is idempotent."""
    try:
        await settlement
    except MessageBusError as error:
        log.warning("could not settle a delivery (it will come again): %s", describe(error))
