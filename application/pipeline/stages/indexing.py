"""Batch indexing with chunk status compare-and-set (shared by dense and sparse).

Per batch: BEGIN_INDEXING (PENDING|FAILED -> INDEXING, rowcount checked) in its own commit,
do the work, then COMPLETE; when the work fails the in-flight batch is moved to FAILED and
the other chunks stay as they were (PENDING). A chunk left INDEXING by an interrupted run is
first moved to FAILED, so it is redone like any failed chunk; SUCCESS chunks are never redone.
Children are read page by page (keyset on order_index), so memory does not grow with the
document.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from typing import Protocol

import attrs

from ragline.application.error_text import StageFailure, describe
from ragline.application.pipeline.stages.needs import HasUnitOfWork
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWork
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


CHILD_PAGE = 2000


async def child_pages(
    services: HasUnitOfWork, scope: DocumentScope, lineage: str, page_size: int = CHILD_PAGE
) -> AsyncIterator[list[ChunkRecord]]:
    """The child chunks of the document's `lineage` (the run's task id) as stored now (fresh
    statuses), one page per read. A short page is the last one: no read (and no unit of
    work) just to find nothing more."""
    after = -1
    while True:
        async with services.uow() as uow:
            page = await uow.chunks.list_children(
                scope, after_order_index=after, limit=page_size, lineage=lineage
            )
        if not page:
            return
        yield page
        if len(page) < page_size:
            return
        after = page[-1].order_index


class HoldsChildren(Protocol):
    children: list[ChunkRecord] | None


@attrs.define
class RememberedChildren:
    """VECTORIZING's output: the document's children when they were one short page, so
    PRETOKENIZE need not read them again. Ids and texts only; statuses are always read
    fresh. A larger document gives nothing (it is never held in memory)."""

    children: list[ChunkRecord] | None = None


async def remembered_pages(
    pages: AsyncIterable[list[ChunkRecord]], ctx: HoldsChildren
) -> AsyncIterator[list[ChunkRecord]]:
    """Pass `pages` through; when the document was one short page, keep it in `ctx` for
    the stages after this one (a large document is never held in memory)."""
    first: list[ChunkRecord] | None = None
    count = 0
    async for page in pages:
        count += 1
        first = page if count == 1 else None  # a second page: let the first one go
        yield page
    ctx.children = first if first is not None and len(first) < CHILD_PAGE else None


class BatchIndexer:
    """Runs `work` over the chunks that still need it, batch by batch, with CAS moves."""

    def __init__(
        self,
        services: HasUnitOfWork,
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
        pages: AsyncIterable[Sequence[ChunkRecord]],
        batch_size: int,
        work: BatchWork,
        error_code: ErrorCode,
    ) -> tuple[int, int]:
        """Index every chunk not yet SUCCESS; returns (children seen, children indexed)."""
        seen = indexed = 0
        async for chunks in pages:
            seen += len(chunks)
            indexed += await self._run_page(chunks, batch_size, work, error_code)
        return seen, indexed

    async def _run_page(
        self,
        chunks: Sequence[ChunkRecord],
        batch_size: int,
        work: BatchWork,
        error_code: ErrorCode,
    ) -> int:
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
