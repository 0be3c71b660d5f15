"""OutboxRelay: publishes the results the pipeline committed to the outbox (SPEC §4.5).

A row is published, then marked SENT; a crash between the two re-publishes it (at least
once; consumers key results by task_id). A failed publish is retried with exponential
backoff; after `max_attempts` the row is marked DEAD with RESULT_NOTIFY_FAILED, kept for
audit, and a copy is offered to the dead-letter publisher when one is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

import attrs

from ragline.application.pipeline.errors import describe
from ragline.application.ports.clock import Clock
from ragline.application.ports.messaging import Publisher
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.unit_of_work import OutboxMessage, UnitOfWorkFactory
from ragline.domain.parse_run import FailureCode, FailureReason

log = logging.getLogger(__name__)


@attrs.frozen
class RelayPolicy:
    """Backoff: base * 2**(attempt-1), capped; DEAD after max_attempts failed publishes."""

    max_attempts: int = 8
    base_delay: timedelta = timedelta(seconds=1)
    max_delay: timedelta = timedelta(minutes=5)
    batch_size: int = 100

    def __attrs_post_init__(self) -> None:
        if self.max_attempts < 1 or self.batch_size < 1:
            raise ValueError("max_attempts and batch_size must be at least 1")

    def delay(self, failed_attempts: int) -> timedelta:
        """How long to wait after the `failed_attempts`-th failure."""
        factor: int = 2 ** min(max(failed_attempts - 1, 0), 30)
        delay: timedelta = self.base_delay * factor
        return min(self.max_delay, delay)


@attrs.define
class RelayReport:
    sent: int = 0
    retried: int = 0
    dead: int = 0


class OutboxRelay:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        publisher: Publisher,
        clock: Clock,
        policy: RelayPolicy | None = None,
        dead_letters: Publisher | None = None,
        metrics: PipelineMetrics = NO_METRICS,
    ) -> None:
        self.uow = uow
        self.publisher = publisher
        self.clock = clock
        self.policy = policy or RelayPolicy()
        self.dead_letters = dead_letters
        self.metrics = metrics

    async def relay_once(self) -> RelayReport:
        """Publish every row due now, once each."""
        report = RelayReport()
        async with self.uow() as uow:
            due = await uow.outbox.due(self.clock.now(), self.policy.batch_size)
        for message in due:
            await self._relay(message, report)
        self.metrics.results_relayed(len(due), report.sent, report.retried, report.dead)
        return report

    async def run(self, stop: asyncio.Event, poll_seconds: float = 0.5) -> None:
        """Relay until `stop` is set, polling for due rows."""
        while not stop.is_set():
            try:
                report = await self.relay_once()
            except Exception as error:  # the store hiccuped: rows stay due, try again later
                log.error("outbox relay pass failed: %s", describe(error))
                report = RelayReport()
            if report.sent or report.retried or report.dead:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=poll_seconds)

    async def _relay(self, message: OutboxMessage, report: RelayReport) -> None:
        try:
            await self.publisher.publish(message.body, message.routing_key)
        except Exception as error:
            await self._failed(message, describe(error), report)
            return
        async with self.uow() as uow:
            if await uow.outbox.mark_sent(message.id, message.attempts):
                report.sent += 1
            await uow.commit()

    async def _failed(self, message: OutboxMessage, detail: str, report: RelayReport) -> None:
        failed = message.attempts + 1
        if failed >= self.policy.max_attempts:
            reason = FailureReason.of(FailureCode.RESULT_NOTIFY_FAILED, detail).text
            async with self.uow() as uow:
                marked = await uow.outbox.mark_dead(message.id, message.attempts, reason)
                await uow.commit()
            if not marked:
                return
            report.dead += 1
            log.error(
                "result of task %s dead after %d attempts: %s", message.task_id, failed, reason
            )
            if self.dead_letters is not None:
                try:
                    await self.dead_letters.publish(message.body, message.routing_key)
                except Exception as error:
                    log.error(
                        "dead-letter publish of %s failed: %s", message.task_id, describe(error)
                    )
            return
        next_at = self.clock.now() + self.policy.delay(failed)
        async with self.uow() as uow:
            if await uow.outbox.mark_retry(message.id, message.attempts, next_at, detail[:512]):
                report.retried += 1
            await uow.commit()
        log.warning(
            "publishing result of task %s failed (attempt %d): %s", message.task_id, failed, detail
        )
