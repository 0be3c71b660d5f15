"""Batch indexing with chunk status compare-and-set (shared by dense and sparse).

Per batch: BEGIN_INDEXING (PENDING|FAILED -> INDEXING, rowcount checked) in its own commit,
do the work, then COMPLETE; when the work fails the in-flight batch is moved to FAILED and
the other chunks stay as they were (PENDING). A chunk left INDEXING by an interrupted run is
first moved to FAILED, so it is redone like any failed chunk; SUCCESS chunks are never redone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.services import StageServices
from ragline.application.ports.unit_of_work import ChunkRecord, DocumentScope, UnitOfWork
from ragline.domain.parse_run import (
    BEGIN_INDEXING,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
    ChunkStatusMove,
    FailureCode,
    needs_indexing,
)

Mover = Callable[[UnitOfWork, DocumentScope, Sequence[str], ChunkStatusMove], Awaitable[int]]
StatusOf = Callable[[ChunkRecord], ChunkIndexStatus | None]
BatchWork = Callable[[Sequence[ChunkRecord]], Awaitable[None]]
ErrorCode = Callable[[Exception], FailureCode]


async def move_dense(
    uow: UnitOfWork, scope: DocumentScope, ids: Sequence[str], move: ChunkStatusMove
) -> int:
    return await uow.chunks.move_dense(scope, ids, move)


async def move_sparse(
    uow: UnitOfWork, scope: DocumentScope, ids: Sequence[str], move: ChunkStatusMove
) -> int:
    return await uow.chunks.move_sparse(scope, ids, move)


async def current_children(services: StageServices, scope: DocumentScope) -> list[ChunkRecord]:
    """The document's child chunks as stored now (fresh statuses)."""
    async with services.uow() as uow:
        chunks = await uow.chunks.list_document(scope)
    return [c for c in chunks if not c.is_parent]


class BatchIndexer:
    """Runs `work` over the chunks that still need it, batch by batch, with CAS moves."""

    def __init__(
        self,
        services: StageServices,
        scope: DocumentScope,
        mover: Mover,
        status_of: StatusOf,
        failure: FailureCode,
    ) -> None:
        self.services = services
        self.scope = scope
        self.mover = mover
        self.status_of = status_of
        self.failure = failure

    async def _move(self, ids: Sequence[str], move: ChunkStatusMove) -> None:
        async with self.services.uow() as uow:
            moved = await self.mover(uow, self.scope, ids, move)
            if moved != len(ids):
                await uow.rollback()
                raise StageFailure(
                    self.failure,
                    f"{move.name} moved {moved} of {len(ids)} chunks (concurrent change)",
                )
            await uow.commit()

    async def run(
        self,
        chunks: Sequence[ChunkRecord],
        batch_size: int,
        work: BatchWork,
        error_code: ErrorCode,
    ) -> int:
        """Index every chunk not yet SUCCESS; returns how many were indexed."""
        stale = [c.chunk_id for c in chunks if self.status_of(c) is ChunkIndexStatus.INDEXING]
        if stale:
            await self._move(stale, FAIL)
        todo = [c for c in chunks if needs_indexing(self.status_of(c) or ChunkIndexStatus.PENDING)]
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            ids = [c.chunk_id for c in batch]
            await self._move(ids, BEGIN_INDEXING)
            try:
                await work(batch)
            except Exception as error:
                await self._move(ids, FAIL)
                if isinstance(error, StageFailure):
                    raise
                raise StageFailure(error_code(error), describe(error)) from error
            await self._move(ids, COMPLETE)
        return len(todo)
