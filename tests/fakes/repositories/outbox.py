"""In-memory outbox: one row per task_id, claims that expire, compare-and-set marks."""

from __future__ import annotations

from datetime import datetime

import attrs

from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.tasks import TaskResult
from tests.fakes.repositories.base import FakeRepository, utc


def _claimable(row: OutboxMessage, now: datetime) -> bool:
    due = row.status == "PENDING" and row.next_attempt_at <= now
    return due and (row.claimed_until is None or row.claimed_until <= now)


class FakeOutbox(FakeRepository):
    def _row(self, task_id: str) -> OutboxMessage | None:
        return self.uow.pending_outbox.get(task_id) or self.db.outbox.get(task_id)

    def _by_id(self, message_id: int) -> OutboxMessage | None:
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        return next((m for m in merged.values() if m.id == message_id), None)

    async def put(self, result: TaskResult, topic: str, at: datetime) -> None:
        await self.check("outbox.put")
        task_id, routing_key = result.task_id, result.routing_key
        at = utc(at)
        await self.uow.lock(("outbox", task_id))
        row = self._row(task_id)
        if row is None:
            row = OutboxMessage(
                next(self.db._outbox_ids), task_id, topic, routing_key, result, 0, at, "PENDING"
            )
        else:
            row = attrs.evolve(
                row,
                topic=topic,
                routing_key=routing_key,
                result=result,
                attempts=0,
                next_attempt_at=at,
                status="PENDING",
                last_error=None,
                claimed_by=None,
                claimed_until=None,
            )
        self.uow.pending_outbox[task_id] = attrs.evolve(row, updated_at=at)
        self.uow.pending_puts.append(task_id)

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        await self.check("outbox.due")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        rows = [m for m in merged.values() if m.status == "PENDING" and m.next_attempt_at <= now]
        return sorted(rows, key=lambda m: (m.next_attempt_at, m.id))[:limit]

    async def claim(
        self, now: datetime, until: datetime, owner: str, limit: int = 100
    ) -> list[OutboxMessage]:
        await self.check("outbox.claim")
        now, until = utc(now), utc(until)
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        candidates = sorted(merged.values(), key=lambda m: (m.next_attempt_at, m.id))
        claimed: list[OutboxMessage] = []
        for row in candidates:
            if len(claimed) == limit:
                break
            if not _claimable(row, now):
                continue
            if not await self.db.try_lock(("outbox", row.task_id), self.uow._owner):
                continue  # FOR UPDATE SKIP LOCKED
            current = self._row(row.task_id)
            if current is None or not _claimable(current, now):
                continue
            current = attrs.evolve(current, claimed_by=owner, claimed_until=until)
            self.uow.pending_outbox[current.task_id] = current
            claimed.append(current)
        return claimed

    async def list_messages(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        await self.check("outbox.list_messages")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        rows = [
            m
            for m in merged.values()
            if m.id > after_id
            and (status is None or m.status == status)
            and (task_id is None or m.task_id == task_id)
        ]
        return sorted(rows, key=lambda m: m.id)[:limit]

    async def count_by_status(self) -> dict[str, int]:
        await self.check("outbox.count_by_status")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        counts: dict[str, int] = {}
        for row in merged.values():
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    async def redrive(self, task_id: str, at: datetime) -> bool:
        await self.check("outbox.redrive")
        at = utc(at)
        await self.uow.lock(("outbox", task_id))
        row = self._row(task_id)
        if row is None or row.status != "DEAD":
            return False
        self.uow.pending_outbox[task_id] = attrs.evolve(
            row,
            status="PENDING",
            attempts=0,
            next_attempt_at=at,
            updated_at=at,
            claimed_by=None,
            claimed_until=None,
        )
        return True

    async def _cas(self, message_id: int, expected_attempts: int, **changes: object) -> bool:
        row = self._by_id(message_id)
        if row is None:
            return False
        await self.uow.lock(("outbox", row.task_id))
        row = self._row(row.task_id)
        if row is None or row.status != "PENDING" or row.attempts != expected_attempts:
            return False
        changes |= {"claimed_by": None, "claimed_until": None}
        self.uow.pending_outbox[row.task_id] = attrs.evolve(row, **changes)  # type: ignore[arg-type]
        return True

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        await self.check("outbox.mark_sent")
        return await self._cas(
            message_id, attempts, status="SENT", attempts=attempts + 1, last_error=None
        )

    async def mark_retry(
        self, message_id: int, attempts: int, next_attempt_at: datetime, error: str
    ) -> bool:
        await self.check("outbox.mark_retry")
        return await self._cas(
            message_id,
            attempts,
            attempts=attempts + 1,
            next_attempt_at=utc(next_attempt_at),
            last_error=error,
        )

    async def mark_dead(self, message_id: int, attempts: int, error: str) -> bool:
        await self.check("outbox.mark_dead")
        return await self._cas(
            message_id, attempts, status="DEAD", attempts=attempts + 1, last_error=error
        )

    async def get(self, task_id: str) -> OutboxMessage | None:
        await self.check("outbox.get")
        return self._row(task_id)
