"""chunk: chunk truth rows, always scoped by tenant (user, dataset) and document.

Index-status moves are compare-and-sets over the move's allowed prior states; the caller
gets the rowcount (chunks actually moved) and compares it with what it asked for.

The statements every indexing stage runs per document (children pages, moves, count, the
lineage's replace and swap) are built once with bound parameters, so SQLAlchemy neither
rebuilds them nor recomputes their cache keys on each call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from itertools import islice
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Update,
    and_,
    bindparam,
    case,
    delete,
    func,
    or_,
    select,
    true,
    update,
)

from ragline.adapters.persistence.sql.connection import IN_LIST_SLICE, ConnectionSlot, SqlConnection
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.repositories.chunk_rows import chunk_to_row, rows_to_chunks
from ragline.adapters.persistence.sql.tables import chunk
from ragline.application.ports.repositories.chunks import ChunkCounts, ChunkRecord
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import ChunkIndexStatus, ChunkStatusMove

INSERT_BATCH = 1000
_VECTOR_MAY_EXIST = tuple(
    s.value for s in (ChunkIndexStatus.INDEXING, ChunkIndexStatus.SUCCESS, ChunkIndexStatus.FAILED)
)


def _slices(ids: Sequence[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), IN_LIST_SLICE):
        yield unique[start : start + IN_LIST_SLICE]


async def _bulk_insert(
    conn: SqlConnection, scope: DocumentScope, records: Iterable[ChunkRecord]
) -> None:
    """One driver-level executemany per batch of the precompiled INSERT, converting rows a
    batch at a time (a 100 MB document has ~350k rows: as dicts all at once, ~0.4 GB).

    The chunk table has only plain strings and integers, so SQLAlchemy's per-row parameter
    processing is skipped (it was a third of the time); the drivers batch the rows.
    """
    compiled = chunk.insert().compile(dialect=conn.dialect)
    statement = str(compiled)
    order = compiled.positiontup or [] if compiled.positional else None
    rest = iter(records)
    while batch := list(islice(rest, INSERT_BATCH)):
        strangers = [c.chunk_id for c in batch if c.scope != scope]
        if strangers:
            raise ValueError(f"chunks outside {scope}: {strangers[:5]}")
        rows = [chunk_to_row(c) for c in batch]
        params: list[Any] = rows
        if order is not None:
            params = [tuple(row[name] for name in order) for row in rows]
        await conn.exec_driver_sql(statement, params)


def _in_document(scope: DocumentScope) -> ColumnElement[bool]:
    return and_(
        chunk.c.user_id == scope.user_id,
        chunk.c.dataset_id == scope.dataset_id,
        chunk.c.doc_id == scope.doc_id,
    )


def _scope_params(scope: DocumentScope) -> dict[str, str]:
    return {"b_user_id": scope.user_id, "b_dataset_id": scope.dataset_id, "b_doc_id": scope.doc_id}


_IN_DOCUMENT_BOUND = and_(
    chunk.c.user_id == bindparam("b_user_id", type_=chunk.c.user_id.type),
    chunk.c.dataset_id == bindparam("b_dataset_id", type_=chunk.c.dataset_id.type),
    chunk.c.doc_id == bindparam("b_doc_id", type_=chunk.c.doc_id.type),
)


_LIVE = chunk.c.live == true()


@cache
def _children_page(limit: int, of_lineage: bool) -> Select[Any]:
    """`list_children` for one page size (callers use one or two sizes), of one lineage
    (`b_lineage`) or of the live one."""
    which = (
        chunk.c.task_id == bindparam("b_lineage", type_=chunk.c.task_id.type)
        if of_lineage
        else _LIVE
    )
    return (
        select(chunk)
        .where(_IN_DOCUMENT_BOUND)
        .where(which)
        .where(chunk.c.parent_id.is_not(None))
        .where(chunk.c.enabled == true())
        .where(chunk.c.order_index > bindparam("b_after", type_=chunk.c.order_index.type))
        .order_by(chunk.c.order_index, chunk.c.chunk_id)
        .limit(limit)
    )


@cache
def _status_move(column: str) -> Update:
    """`UPDATE chunk SET <column> = :b_to WHERE <tenant> AND chunk_id IN :b_ids AND
    coalesce(doc_id, '') = :b_doc_id AND <column> IN :b_allowed`.

    The document test is written so no planner can answer it from the document index:
    right after a big document is inserted, PostgreSQL has no statistics for it and may
    pick the document index for a move, then test the whole IN list against every row of
    the document: quadratic (20,000 chunks took 30 s). As an expression the test stays a
    filter, and the primary key (user, dataset, chunk_id) serves the IN list.
    """
    status = chunk.c[column]
    return (
        update(chunk)
        .where(chunk.c.user_id == bindparam("b_user_id", type_=chunk.c.user_id.type))
        .where(chunk.c.dataset_id == bindparam("b_dataset_id", type_=chunk.c.dataset_id.type))
        .where(chunk.c.chunk_id.in_(bindparam("b_ids", expanding=True)))
        .where(
            func.coalesce(chunk.c.doc_id, "") == bindparam("b_doc_id", type_=chunk.c.doc_id.type)
        )
        .where(status.in_(bindparam("b_allowed", expanding=True)))
        .values({column: bindparam("b_to", type_=status.type)})
    )


_COUNT_DOCUMENT = select(func.count()).select_from(chunk).where(_IN_DOCUMENT_BOUND).where(_LIVE)

_OF_LINEAGE_BOUND = and_(
    _IN_DOCUMENT_BOUND, chunk.c.task_id == bindparam("b_lineage", type_=chunk.c.task_id.type)
)
_OF_OTHER_LINEAGES_BOUND = and_(
    _IN_DOCUMENT_BOUND, chunk.c.task_id != bindparam("b_lineage", type_=chunk.c.task_id.type)
)
_CHILD = chunk.c.parent_id.is_not(None)
# replace_lineage and swap_lineage, once a file each, and adopt_lineage (scope params and
# `b_lineage`, the lineage they act on)
_LINEAGE_CHILDREN = select(chunk.c.chunk_id).where(_OF_LINEAGE_BOUND).where(_CHILD)
_DELETE_LINEAGE = delete(chunk).where(_OF_LINEAGE_BOUND)
_LINEAGE_LIVE_COUNTS = (
    select(chunk.c.live, func.count()).where(_OF_LINEAGE_BOUND).group_by(chunk.c.live)
)
_LINEAGE_GOES_LIVE = (
    update(chunk).where(_OF_LINEAGE_BOUND).where(chunk.c.live.is_(False)).values(live=True)
)
_OTHER_LINEAGES_CHILDREN = select(chunk.c.chunk_id).where(_OF_OTHER_LINEAGES_BOUND).where(_CHILD)
_DELETE_OTHER_LINEAGES = delete(chunk).where(_OF_OTHER_LINEAGES_BOUND)
_ADOPT_LINEAGE = (
    update(chunk)
    .where(_OF_LINEAGE_BOUND)
    .values(task_id=bindparam("b_adopter", type_=chunk.c.task_id.type))
)


class SqlChunkRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot

    async def replace_document(self, scope: DocumentScope, chunks: Iterable[ChunkRecord]) -> None:
        conn = self._slot.conn
        with store_errors("chunk replace_document"):
            await conn.execute(delete(chunk).where(_in_document(scope)))
            await _bulk_insert(conn, scope, chunks)

    async def replace_lineage(
        self, scope: DocumentScope, lineage: str, chunks: Iterable[ChunkRecord]
    ) -> list[str]:
        conn = self._slot.conn
        params = {**_scope_params(scope), "b_lineage": lineage}
        with store_errors("chunk replace_lineage"):
            result = await conn.execute(_LINEAGE_CHILDREN, params)
            stale = [str(row[0]) for row in result.all()]
            await conn.execute(_DELETE_LINEAGE, params)
            await _bulk_insert(conn, scope, chunks)
        return stale

    async def adopt_lineage(self, scope: DocumentScope, retried: str, lineage: str) -> int:
        params = {**_scope_params(scope), "b_lineage": retried, "b_adopter": lineage}
        with store_errors("chunk adopt_lineage"):
            result = await self._slot.conn.execute(_ADOPT_LINEAGE, params)
        return int(result.rowcount)

    async def swap_lineage(self, scope: DocumentScope, lineage: str) -> list[str]:
        conn = self._slot.conn
        params = {**_scope_params(scope), "b_lineage": lineage}
        with store_errors("chunk swap_lineage"):
            rows = await conn.execute(_LINEAGE_LIVE_COUNTS, params)
            counts = {bool(live): int(n) for live, n in rows.all()}
            if not counts:
                return []  # nothing of this run to swap in (the document was deleted)
            waiting = counts.get(False, 0)
            if waiting:
                moved = await conn.execute(_LINEAGE_GOES_LIVE, params)
                if moved.rowcount != waiting:
                    raise ConcurrentUpdate(
                        f"lineage {lineage} of {scope}: {moved.rowcount} of {waiting} went live"
                    )
            result = await conn.execute(_OTHER_LINEAGES_CHILDREN, params)
            removed = [str(row[0]) for row in result.all()]
            await conn.execute(_DELETE_OTHER_LINEAGES, params)
        return removed

    async def list_document(self, scope: DocumentScope) -> list[ChunkRecord]:
        with store_errors("chunk list_document"):
            result = await self._slot.conn.execute(
                select(chunk)
                .where(_in_document(scope))
                .order_by(chunk.c.order_index, chunk.c.chunk_id)
            )
            rows = result.all()
        return rows_to_chunks(rows)

    async def list_children(
        self,
        scope: DocumentScope,
        *,
        after_order_index: int = -1,
        limit: int = 1000,
        lineage: str | None = None,
    ) -> list[ChunkRecord]:
        params: dict[str, Any] = {**_scope_params(scope), "b_after": after_order_index}
        if lineage is not None:
            params["b_lineage"] = lineage
        with store_errors("chunk list_children"):
            result = await self._slot.conn.execute(
                _children_page(limit, lineage is not None), params
            )
            rows = result.all()
        return rows_to_chunks(rows)

    async def list_parents(
        self, scope: DocumentScope, *, after_order_index: int = -1, limit: int = 50
    ) -> list[ChunkRecord]:
        with store_errors("chunk list_parents"):
            result = await self._slot.conn.execute(
                select(chunk)
                .where(_in_document(scope))
                .where(_LIVE)
                .where(chunk.c.parent_id.is_(None))
                .where(chunk.c.order_index > after_order_index)
                .order_by(chunk.c.order_index, chunk.c.chunk_id)
                .limit(limit)
            )
            rows = result.all()
        return rows_to_chunks(rows)

    async def children_of(
        self, scope: DocumentScope, parent_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        found: list[ChunkRecord] = []
        with store_errors("chunk children_of"):
            for ids in _slices(parent_ids):
                result = await self._slot.conn.execute(
                    select(chunk)
                    .where(_in_document(scope))
                    .where(_LIVE)
                    .where(chunk.c.parent_id.in_(ids))
                )
                found.extend(rows_to_chunks(result.all()))
        return sorted(found, key=lambda c: (c.order_index, c.chunk_id))

    async def set_enabled(self, scope: DocumentScope, chunk_id: str, *, enabled: bool) -> int:
        with store_errors("chunk set_enabled"):
            result = await self._slot.conn.execute(
                update(chunk)
                .where(_in_document(scope))
                .where(chunk.c.chunk_id == chunk_id)
                .where(chunk.c.enabled == (not enabled))
                .values(enabled=enabled)
            )
        return int(result.rowcount)

    async def replace_text(
        self, scope: DocumentScope, chunk_id: str, *, expected: str, text: str
    ) -> int:
        pending = ChunkIndexStatus.PENDING.value
        with store_errors("chunk replace_text"):
            result = await self._slot.conn.execute(
                update(chunk)
                .where(_in_document(scope))
                .where(chunk.c.chunk_id == chunk_id)
                .where(chunk.c.parent_id.is_not(None))
                .where(chunk.c.text == expected)
                .values(text=text, edited=True, dense_status=pending, sparse_status=pending)
            )
        return int(result.rowcount)

    async def get_many(
        self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        found: dict[str, ChunkRecord] = {}
        with store_errors("chunk get_many"):
            for ids in _slices(chunk_ids):
                result = await self._slot.conn.execute(
                    select(chunk)
                    .where(chunk.c.user_id == user_id)
                    .where(chunk.c.dataset_id == dataset_id)
                    .where(chunk.c.chunk_id.in_(ids))
                    .where(_LIVE)
                )
                for record in rows_to_chunks(result.all()):
                    found[record.chunk_id] = record
        return [found[i] for i in dict.fromkeys(chunk_ids) if i in found]

    async def move_dense(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        return await self._move("dense_status", scope, chunk_ids, move)

    async def move_sparse(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        return await self._move("sparse_status", scope, chunk_ids, move)

    async def _move(
        self, column: str, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        if move.to in move.allowed_from:
            raise ValueError(f"{move.name} would leave some rows unchanged; not a real move")
        statement = _status_move(column)
        allowed = sorted(s.value for s in move.allowed_from)
        params: dict[str, Any] = {
            **_scope_params(scope),
            "b_allowed": allowed,
            "b_to": move.to.value,
        }
        moved = 0
        with store_errors(f"chunk move {column}"):
            for ids in _slices(chunk_ids):
                result = await self._slot.conn.execute(statement, {**params, "b_ids": ids})
                moved += result.rowcount
        return moved

    async def count_document(self, scope: DocumentScope) -> int:
        with store_errors("chunk count_document"):
            result = await self._slot.conn.execute(_COUNT_DOCUMENT, _scope_params(scope))
            return int(result.scalar_one())

    async def delete_document(self, scope: DocumentScope) -> int:
        with store_errors("chunk delete_document"):
            result = await self._slot.conn.execute(delete(chunk).where(_in_document(scope)))
        return int(result.rowcount)

    async def document_counts(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> Mapping[str, ChunkCounts]:
        success = ChunkIndexStatus.SUCCESS.value

        def count_if(condition: ColumnElement[bool]) -> Any:
            return func.sum(case((condition, 1), else_=0))

        counts: dict[str, ChunkCounts] = {}
        with store_errors("chunk document_counts"):
            for ids in _slices(doc_ids):
                result = await self._slot.conn.execute(
                    select(
                        chunk.c.doc_id,
                        count_if(chunk.c.parent_id.is_(None)),
                        count_if(chunk.c.parent_id.is_not(None)),
                        count_if(chunk.c.dense_status == success),
                        count_if(chunk.c.sparse_status == success),
                    )
                    .where(chunk.c.user_id == user_id)
                    .where(chunk.c.dataset_id == dataset_id)
                    .where(chunk.c.doc_id.in_(ids))
                    .where(_LIVE)
                    .group_by(chunk.c.doc_id)
                )
                for row in result.all():
                    doc_id, parents, kids, dense, sparse = tuple(row)
                    counts[doc_id] = ChunkCounts(int(parents), int(kids), int(dense), int(sparse))
        return counts

    async def count_user_vectors(self, user_id: str) -> int:
        with store_errors("chunk count_user_vectors"):
            result = await self._slot.conn.execute(
                select(func.count())
                .select_from(chunk)
                .where(chunk.c.user_id == user_id)
                .where(chunk.c.dense_status.in_(_VECTOR_MAY_EXIST))
            )
            return int(result.scalar_one())

    async def list_user_children(
        self,
        user_id: str,
        *,
        first: str | None = None,
        last: str | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 1000,
    ) -> list[ChunkRecord]:
        query = (
            select(chunk)
            .where(chunk.c.user_id == user_id)
            .where(chunk.c.parent_id.is_not(None))
            .where(chunk.c.enabled == true())
            .where(chunk.c.live == true())
            .where(chunk.c.dense_status == ChunkIndexStatus.SUCCESS.value)
            .order_by(chunk.c.chunk_id, chunk.c.dataset_id)
            .limit(limit)
        )
        if first is not None:
            query = query.where(chunk.c.chunk_id >= first)
        if last is not None:
            query = query.where(chunk.c.chunk_id <= last)
        if after is not None:
            query = query.where(
                or_(
                    chunk.c.chunk_id > after[0],
                    and_(chunk.c.chunk_id == after[0], chunk.c.dataset_id > after[1]),
                )
            )
        with store_errors("chunk list_user_children"):
            result = await self._slot.conn.execute(query)
            return rows_to_chunks(result.all())
