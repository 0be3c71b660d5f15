"""Worker: task consumers, the outbox relay and the stale-run sweep, in this event loop.

`ragline worker` runs one until SIGINT/SIGTERM; on embedded defaults (`bus.in_process`)
`ragline ingest` and `ragline retry` run one around their use case, since only this process
can reach the in-process bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from functools import partial

from ragline.adapters.inbound.task_consumer.consumer import SupervisedConsumer, TaskDecoder
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.ports.messaging import MessageBus
from ragline.application.ports.misconfiguration import Misconfiguration

log = logging.getLogger("ragline")


class InProcessBusOnSharedDatabase(Misconfiguration):
    """A worker on the in-process bus against a database other processes share: its relay
    would mark real outbox rows SENT into a bus nobody else reads (issue 19 item 3)."""

    def __init__(self, database: str) -> None:
        super().__init__(
            f"MQ_VENDOR is unset (the in-process bus) but the database is {database}, which "
            "other processes share: set MQ_VENDOR=rabbitmq or MQ_VENDOR=kafka. The "
            "in-process bus is for the embedded single-process mode (SQLite) only."
        )


class Worker:
    def __init__(
        self,
        pipeline: ParseTaskPipeline,
        wire: TaskDecoder,
        bus: MessageBus,
        relay: OutboxRelay,
        *,
        consumers: int = 1,
        concurrency: int = 1,
        relay_poll_seconds: float = 0.1,
        shared_database: str | None = None,
    ) -> None:
        """`consumers` group members (sources), each running up to `concurrency` tasks.
        `shared_database` names a non-embedded database (None: embedded SQLite); with it,
        the in-process bus is refused."""
        if bus.in_process and shared_database is not None:
            raise InProcessBusOnSharedDatabase(shared_database)
        self.pipeline = pipeline
        self.wire = wire
        self.bus = bus
        self.relay = relay
        self.consumers = consumers
        self.concurrency = concurrency
        self.relay_poll_seconds = relay_poll_seconds
        self.supervised: list[SupervisedConsumer] = []  # the consumers while running

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Consume and relay while inside; on leaving, stop and wait (10 s at most)."""
        open_source = partial(self.bus.task_source, in_flight=self.concurrency)
        supervised = self.supervised = [
            SupervisedConsumer(self.pipeline, self.wire, open_source, concurrency=self.concurrency)
            for _ in range(self.consumers)
        ]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(s.run(stop)) for s in supervised]
        tasks.append(
            asyncio.create_task(self.relay.run(stop, poll_seconds=self.relay_poll_seconds))
        )
        tasks.append(asyncio.create_task(self.pipeline.sweep_until(stop)))  # stale runs
        try:
            yield
        finally:
            stop.set()
            for consumer in supervised:
                await consumer.close()
            done, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("worker task ended with %r", task.exception())

    async def run_until(self, stop: asyncio.Event) -> None:
        async with self.running():
            await stop.wait()

    def alongside(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Running here when only this process can reach the bus; otherwise nothing."""
        return self.running() if self.bus.in_process else contextlib.nullcontext()
