"""OutboxRelay: publishes the results the pipeline committed to the outbox (invariant 5 of
docs/design/0002-run-state-machine.md).

Each pass claims the due rows for a lease (`outbox.claim`), so relays in several workers on
one database publish disjoint rows; a relay that dies holding a claim delays its rows only
until the lease ends. A row is published, then marked SENT; a crash between the two (or a
lease that ran out mid-pass) re-publishes it: at least once, consumers key results by
task_id. A failed publish is retried with exponential backoff; after `max_attempts` the row
is marked DEAD with RESULT_NOTIFY_FAILED, kept for audit (`ragline outbox redrive` sets it
back to PENDING), and a copy is offered to the dead-letter publisher when one is configured,
with why and after how many attempts in its headers (as a task dead letter says why).
The rows hold results as values; the publishers write the ParseResult messages.

A pass that fails (the database does not answer) or whose every publish failed (the broker
is away) makes the relay back off: the pause doubles from the poll interval up to
`max_backoff`, jittered to 50-100 %, and is back to the poll interval after a pass that
sent something (issue 19: a relay logged ~9.5 failures/s during a 30 s outage).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import uuid
from datetime import timedelta

import attrs

from ragline.application.error_text import describe
from ragline.application.ports.clock import Clock
from ragline.application.ports.messaging import (
    DEAD_LETTER_ATTEMPTS_HEADER,
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
)
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.ports.task_messages import ResultPublisher
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_run import FailureCode, FailureReason

log = logging.getLogger(__name__)
_JITTER = secrets.SystemRandom()


@attrs.frozen
class RelayPolicy:
    """Backoff: base * 2**(attempt-1), capped; DEAD after max_attempts failed publishes."""

    max_attempts: int = 8
    base_delay: timedelta = timedelta(seconds=1)
    max_delay: timedelta = timedelta(minutes=5)
    batch_size: int = 100
    lease: timedelta = timedelta(minutes=2)  # how long a pass holds the rows it claimed

    def __attrs_post_init__(self) -> None:
        if self.max_attempts < 1 or self.batch_size < 1:
            raise ValueError("max_attempts and batch_size must be at least 1")
        if self.lease <= timedelta(0):
            raise ValueError("lease must be positive")

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
    expired: int = 0  # claimed rows left unpublished because the lease ran out first


class OutboxRelay:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        publisher: ResultPublisher,
        clock: Clock,
        policy: RelayPolicy | None = None,
        dead_letters: ResultPublisher | None = None,
        metrics: PipelineMetrics = NO_METRICS,
    ) -> None:
        self.uow = uow
        self.publisher = publisher
        self.clock = clock
        self.policy = policy or RelayPolicy()
        self.dead_letters = dead_letters
        self.metrics = metrics
        self.relay_id = uuid.uuid4().hex[:16]
        self._passes = itertools.count(1)

    async def relay_once(self) -> RelayReport:
        """Claim the rows due now (up to a batch) and publish each once."""
        report = RelayReport()
        now = self.clock.now()
        owner = f"{self.relay_id}/{next(self._passes)}"
        async with self.uow() as uow:
            claimed = await uow.outbox.claim(
                now, now + self.policy.lease, owner, self.policy.batch_size
            )
            await uow.commit()
        for message in claimed:
            until = message.claimed_until
            if until is not None and self.clock.now() >= until:
                report.expired += 1  # another relay may hold it now: leave it to that one
                continue
            await self._relay(message, report)
        self.metrics.results_relayed(len(claimed), report.sent, report.retried, report.dead)
        return report

    async def run(
        self, stop: asyncio.Event, poll_seconds: float = 0.5, max_backoff: float = 30.0
    ) -> None:
        """Relay until `stop` is set, polling for due rows; back off while passes fail."""
        backoff = poll_seconds
        while not stop.is_set():
            try:
                report = await self.relay_once()
            except Exception as error:  # the store hiccuped: rows stay due, try again later
                pause = backoff * _JITTER.uniform(0.5, 1.0)
                log.error("outbox relay pass failed (next in %.1f s): %s", pause, describe(error))
                backoff = min(backoff * 2, max_backoff)
                await self._pause(stop, pause)
                continue
            if report.sent or report.dead or report.expired:
                backoff = poll_seconds
                continue  # more may be due right away
            if report.retried:  # every publish of the pass failed: the broker is away
                pause = backoff * _JITTER.uniform(0.5, 1.0)
                backoff = min(backoff * 2, max_backoff)
            else:
                pause = backoff = poll_seconds
            await self._pause(stop, pause)

    async def _pause(self, stop: asyncio.Event, seconds: float) -> None:
        """Until `seconds` have passed or `stop` is set."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=seconds)

    async def _relay(self, message: OutboxMessage, report: RelayReport) -> None:
        try:
            await self.publisher.publish(message.result)
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
            fields = {"task_id": message.task_id}
            log.error(
                "result of task %s dead after %d attempts: %s",
                message.task_id,
                failed,
                reason,
                extra=fields,
            )
            if self.dead_letters is not None:
                why = {
                    DEAD_LETTER_REASON_HEADER: reason,
                    DEAD_LETTER_ATTEMPTS_HEADER: str(failed),
                    DEAD_LETTER_ORIGIN_HEADER: message.topic,
                }
                try:
                    await self.dead_letters.publish(message.result, why)
                except Exception as error:
                    log.error(
                        "dead-letter publish of %s failed: %s",
                        message.task_id,
                        describe(error),
                        extra=fields,
                    )
            return
        next_at = self.clock.now() + self.policy.delay(failed)
        async with self.uow() as uow:
            if await uow.outbox.mark_retry(message.id, message.attempts, next_at, detail[:512]):
                report.retried += 1
            await uow.commit()
        log.warning(
            "publishing result of task %s failed (attempt %d): %s",
            message.task_id,
            failed,
            detail,
            extra={"task_id": message.task_id},
        )
