"""ManageOutbox: what `ragline outbox list|redrive` and the HTTP outbox routes call.

A DEAD result is one the relay gave up on (RESULT_NOTIFY_FAILED after the last attempt); it
is still owed to the business side. Redriving it is a compare-and-set DEAD -> PENDING with
fresh attempts, so the relay publishes it again; a row that is not DEAD (already redriven,
never dead, unknown) is reported and left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import attrs

from ragline.application.ports.clock import Clock
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.ports.unit_of_work import UnitOfWorkFactory

log = logging.getLogger(__name__)

STATUSES = ("PENDING", "SENT", "DEAD")
MAX_PAGE = 1000
REDRIVE_PAGE = 500


class UnknownOutboxStatus(ValueError):
    """A status filter that is not PENDING, SENT or DEAD."""


def outbox_status(value: str | None) -> str | None:
    """A status filter in any case ("dead") as stored ("DEAD")."""
    if value is None:
        return None
    status = value.strip().upper()
    if status not in STATUSES:
        raise UnknownOutboxStatus(f"unknown outbox status {value!r} (one of {', '.join(STATUSES)})")
    return status


@attrs.frozen
class RedriveReport:
    redriven: list[str] = attrs.field(factory=list)  # task_ids set back to PENDING
    refused: dict[str, str] = attrs.field(factory=dict)  # task_id -> why it was left alone


class ManageOutbox:
    def __init__(
        self, uow_factory: UnitOfWorkFactory, clock: Clock, metrics: PipelineMetrics = NO_METRICS
    ) -> None:
        self._uow_factory = uow_factory
        self._clock = clock
        self._metrics = metrics

    async def list(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        """Rows in id order after `after_id`, filtered by status (any case) and task."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"1 <= limit <= {MAX_PAGE}")
        wanted = outbox_status(status)
        async with self._uow_factory() as uow:
            return await uow.outbox.list_messages(wanted, task_id, after_id=after_id, limit=limit)

    async def counts(self) -> Mapping[str, int]:
        """Rows per status (every status present, 0 when none), also reported as metrics."""
        async with self._uow_factory() as uow:
            stored = await uow.outbox.count_by_status()
        counts = {status: int(stored.get(status, 0)) for status in STATUSES}
        self._metrics.outbox_rows(counts)
        return counts

    async def redrive(self, task_ids: Sequence[str]) -> RedriveReport:
        """Set these DEAD results back to PENDING; the others are reported, untouched."""
        report = RedriveReport()
        at = self._clock.now()
        async with self._uow_factory() as uow:
            for task_id in dict.fromkeys(task_ids):
                if await uow.outbox.redrive(task_id, at):
                    report.redriven.append(task_id)
                    continue
                row = await uow.outbox.get(task_id)
                report.refused[task_id] = (
                    "no result for this task_id" if row is None else f"not DEAD ({row.status})"
                )
            await uow.commit()
        self._logged(report)
        return report

    async def redrive_all_dead(self) -> RedriveReport:
        """Every DEAD result back to PENDING, a page at a time (one commit per page)."""
        report = RedriveReport()
        after_id = 0
        while True:
            at = self._clock.now()
            async with self._uow_factory() as uow:
                page = await uow.outbox.list_messages("DEAD", after_id=after_id, limit=REDRIVE_PAGE)
                for row in page:
                    if await uow.outbox.redrive(row.task_id, at):
                        report.redriven.append(row.task_id)
                    else:  # changed since it was listed (another redrive, a new put)
                        report.refused[row.task_id] = "no longer DEAD"
                await uow.commit()
            if len(page) < REDRIVE_PAGE:
                break
            after_id = page[-1].id
        self._logged(report)
        return report

    @staticmethod
    def _logged(report: RedriveReport) -> None:
        if report.redriven:
            log.warning(
                "outbox: %d DEAD result(s) redriven to PENDING: %s",
                len(report.redriven),
                ", ".join(report.redriven[:20]) + (" ..." if len(report.redriven) > 20 else ""),
            )
