"""Re-embedding metrics taken from what the use cases write, reported once it is committed.

`metered(uow, metrics)` is a UnitOfWorkFactory whose units hand out a recording re-embedding
repository: a batch finished (`finish_batch` True) counts its chunks, a claim with more than
one claim on the batch is a take-over (its first holder's lease ran out), a re-embedding added
or saved in another status than the one this process last read it in entered that status.
Each unit reports at its commit only, so a rolled-back write (a lost compare-and-set) counts
nothing, and each move is counted by the one process whose compare-and-set won it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Self

from ragline.application.ports.metrics import PipelineMetrics
from ragline.application.ports.repositories.chunks import ChunkRepository
from ragline.application.ports.repositories.documents import DocumentRepository
from ragline.application.ports.repositories.model_configs import ModelConfigRepository
from ragline.application.ports.repositories.outbox import OutboxRepository
from ragline.application.ports.repositories.parse_batches import ParseBatchRepository
from ragline.application.ports.repositories.parsed_logs import ParsedLogRepository
from ragline.application.ports.repositories.reembeddings import ReembeddingRepository
from ragline.application.ports.repositories.runs import ParseRunRepository
from ragline.application.ports.repositories.uploads import UploadRepository
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.domain.parse_run import RunEvent
from ragline.domain.reembedding import (
    TERMINAL_REEMBEDDING,
    CopyBatch,
    Generations,
    Reembedding,
    ReembeddingStatus,
)

SEEN_MAX = 10_000


class Meter:
    """What one process last read of each re-embedding (to tell a move from a save)."""

    def __init__(self, metrics: PipelineMetrics) -> None:
        self.metrics = metrics
        self.seen: dict[str, ReembeddingStatus] = {}

    def read(self, item: Reembedding | None) -> None:
        if item is not None:
            if len(self.seen) >= SEEN_MAX:
                self.seen.clear()  # only a lost label on a move in flight
            self.seen[item.id] = item.status


class Recording:
    """One unit's re-embedding repository, its counts held until the commit."""

    def __init__(self, inner: ReembeddingRepository, meter: Meter) -> None:
        self._inner = inner
        self._meter = meter
        self.chunks = 0
        self.taken_over = 0
        self.entered: list[tuple[str, ReembeddingStatus]] = []

    def report(self) -> None:
        metrics, seen = self._meter.metrics, self._meter.seen
        if self.chunks:
            metrics.chunks_reembedded(self.chunks)
        for _ in range(self.taken_over):
            metrics.copy_batch_taken_over()
        for item_id, status in self.entered:
            if seen.get(item_id) is not status:
                metrics.reembedding_entered(status.value)
            if status in TERMINAL_REEMBEDDING:
                seen.pop(item_id, None)
            else:
                seen[item_id] = status
        self.chunks, self.taken_over, self.entered = 0, 0, []

    async def generations(self, user_id: str) -> Generations:
        return await self._inner.generations(user_id)

    async def save_generations(self, generations: Generations, expected_version: int) -> None:
        await self._inner.save_generations(generations, expected_version)

    async def add(self, reembedding: Reembedding) -> None:
        await self._inner.add(reembedding)
        self.entered.append((reembedding.id, reembedding.status))

    async def get(self, reembedding_id: str) -> Reembedding | None:
        item = await self._inner.get(reembedding_id)
        self._meter.read(item)
        return item

    async def active_for(self, user_id: str) -> Reembedding | None:
        item = await self._inner.active_for(user_id)
        self._meter.read(item)
        return item

    async def list_active(self) -> list[Reembedding]:
        items = await self._inner.list_active()
        for item in items:
            self._meter.read(item)
        return items

    async def save(self, reembedding: Reembedding, expected_version: int) -> None:
        await self._inner.save(reembedding, expected_version)
        self.entered.append((reembedding.id, reembedding.status))

    async def add_batches(self, batches: Sequence[CopyBatch]) -> None:
        await self._inner.add_batches(batches)

    async def batches(self, reembedding_id: str) -> list[CopyBatch]:
        return await self._inner.batches(reembedding_id)

    async def claim_batch(
        self, reembedding_id: str, owner: str, now: datetime, lease_until: datetime
    ) -> CopyBatch | None:
        claimed = await self._inner.claim_batch(reembedding_id, owner, now, lease_until)
        if claimed is not None and claimed.claims > 1:
            self.taken_over += 1
        return claimed

    async def renew_batch(
        self, reembedding_id: str, seq: int, owner: str, claims: int, lease_until: datetime
    ) -> bool:
        return await self._inner.renew_batch(reembedding_id, seq, owner, claims, lease_until)

    async def finish_batch(
        self,
        reembedding_id: str,
        seq: int,
        owner: str,
        claims: int,
        copied: int,
        digest: str | None = None,
    ) -> bool:
        done = await self._inner.finish_batch(reembedding_id, seq, owner, claims, copied, digest)
        if done:
            self.chunks += copied
        return done


class MeteredUnit:
    """A unit of work whose re-embedding writes are counted once committed."""

    def __init__(self, inner: UnitOfWork, meter: Meter) -> None:
        self._inner = inner
        self._meter = meter
        self._recording: Recording | None = None

    @property
    def parsed_logs(self) -> ParsedLogRepository:
        return self._inner.parsed_logs

    @property
    def runs(self) -> ParseRunRepository:
        return self._inner.runs

    @property
    def documents(self) -> DocumentRepository:
        return self._inner.documents

    @property
    def chunks(self) -> ChunkRepository:
        return self._inner.chunks

    @property
    def model_configs(self) -> ModelConfigRepository:
        return self._inner.model_configs

    @property
    def outbox(self) -> OutboxRepository:
        return self._inner.outbox

    @property
    def parse_batches(self) -> ParseBatchRepository:
        return self._inner.parse_batches

    @property
    def reembeddings(self) -> Recording:
        if self._recording is None:
            self._recording = Recording(self._inner.reembeddings, self._meter)
        return self._recording

    @property
    def uploads(self) -> UploadRepository:
        return self._inner.uploads

    async def __aenter__(self) -> Self:
        self._inner = await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)

    async def commit(self) -> None:
        await self._inner.commit()
        if self._recording is not None:
            self._recording.report()

    async def rollback(self) -> None:
        await self._inner.rollback()
        if self._recording is not None:
            self._recording = None

    def collect_new_events(self) -> list[RunEvent]:
        return self._inner.collect_new_events()


def metered(uow: UnitOfWorkFactory, metrics: PipelineMetrics) -> UnitOfWorkFactory:
    """`uow`, its re-embedding writes reported to `metrics` at each commit."""
    meter = Meter(metrics)

    def unit() -> UnitOfWork:
        return MeteredUnit(uow(), meter)

    return unit
