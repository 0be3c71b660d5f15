"""In-memory chunk truth rows: replaced per document, moved by compare-and-set over the
allowed prior states."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from ragline.application.ports.repositories.chunks import ChunkCounts, ChunkRecord
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    ChunkStatusMove,
)
from tests.fakes.repositories.base import FakeRepository


class FakeChunks(FakeRepository):
    def _doc(self, scope: DocumentScope) -> dict[str, ChunkRecord]:
        if scope in self.uow.pending_chunks:
            return self.uow.pending_chunks[scope]
        return self.db.chunks.get(scope, {})

    async def _writable(self, scope: DocumentScope) -> dict[str, ChunkRecord]:
        await self.uow.lock(("chunks", scope))
        if scope not in self.uow.pending_chunks:
            self.uow.pending_chunks[scope] = dict(self.db.chunks.get(scope, {}))
        return self.uow.pending_chunks[scope]

    async def replace_document(self, scope: DocumentScope, chunks: Iterable[ChunkRecord]) -> None:
        await self.check("chunks.replace_document")
        await self._writable(scope)
        rows: dict[str, ChunkRecord] = {}
        for chunk in chunks:
            if chunk.scope != scope:
                raise ValueError(f"chunk {chunk.chunk_id} is outside {scope}")
            if chunk.chunk_id in rows:
                raise PersistenceError(f"duplicate chunk_id {chunk.chunk_id}")
            rows[chunk.chunk_id] = chunk
        self.uow.pending_chunks[scope] = rows

    async def replace_lineage(
        self, scope: DocumentScope, lineage: str, chunks: Iterable[ChunkRecord]
    ) -> list[str]:
        await self.check("chunks.replace_lineage")
        rows = await self._writable(scope)
        stale = [c.chunk_id for c in rows.values() if c.task_id == lineage and not c.is_parent]
        kept = {i: c for i, c in rows.items() if c.task_id != lineage}
        for chunk in chunks:
            if chunk.scope != scope:
                raise ValueError(f"chunk {chunk.chunk_id} is outside {scope}")
            if chunk.chunk_id in kept:
                raise PersistenceError(f"duplicate chunk_id {chunk.chunk_id}")
            kept[chunk.chunk_id] = chunk
        self.uow.pending_chunks[scope] = kept
        return stale

    async def adopt_lineage(self, scope: DocumentScope, retried: str, lineage: str) -> int:
        await self.check("chunks.adopt_lineage")
        rows = await self._writable(scope)
        moved = 0
        for chunk_id, row in list(rows.items()):
            if row.task_id == retried:
                rows[chunk_id] = attrs.evolve(row, task_id=lineage)
                moved += 1
        return moved

    async def swap_lineage(self, scope: DocumentScope, lineage: str) -> list[str]:
        await self.check("chunks.swap_lineage")
        rows = await self._writable(scope)
        if not any(c.task_id == lineage for c in rows.values()):
            return []
        removed = [c.chunk_id for c in rows.values() if c.task_id != lineage and not c.is_parent]
        self.uow.pending_chunks[scope] = {
            i: attrs.evolve(c, live=True) for i, c in rows.items() if c.task_id == lineage
        }
        return removed

    async def list_document(self, scope: DocumentScope) -> list[ChunkRecord]:
        await self.check("chunks.list_document")
        return sorted(self._doc(scope).values(), key=lambda c: c.order_index)

    def _live(self, scope: DocumentScope) -> list[ChunkRecord]:
        return [c for c in self._doc(scope).values() if c.live]

    async def list_children(
        self,
        scope: DocumentScope,
        *,
        after_order_index: int = -1,
        limit: int = 1000,
        lineage: str | None = None,
    ) -> list[ChunkRecord]:
        await self.check("chunks.list_children")
        later = [
            c
            for c in self._doc(scope).values()
            if (c.live if lineage is None else c.task_id == lineage)
            and not c.is_parent
            and c.enabled
            and c.order_index > after_order_index
        ]
        return sorted(later, key=lambda c: c.order_index)[:limit]

    async def list_parents(
        self, scope: DocumentScope, *, after_order_index: int = -1, limit: int = 50
    ) -> list[ChunkRecord]:
        await self.check("chunks.list_parents")
        later = [c for c in self._live(scope) if c.is_parent and c.order_index > after_order_index]
        return sorted(later, key=lambda c: (c.order_index, c.chunk_id))[:limit]

    async def children_of(
        self, scope: DocumentScope, parent_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        await self.check("chunks.children_of")
        wanted = set(parent_ids)
        kids = [c for c in self._live(scope) if c.parent_id in wanted]
        return sorted(kids, key=lambda c: (c.order_index, c.chunk_id))

    async def set_enabled(self, scope: DocumentScope, chunk_id: str, *, enabled: bool) -> int:
        await self.check("chunks.set_enabled")
        rows = await self._writable(scope)
        row = rows.get(chunk_id)
        if row is None or row.enabled is enabled:
            return 0
        rows[chunk_id] = attrs.evolve(row, enabled=enabled)
        return 1

    async def replace_text(
        self, scope: DocumentScope, chunk_id: str, *, expected: str, text: str
    ) -> int:
        await self.check("chunks.replace_text")
        rows = await self._writable(scope)
        row = rows.get(chunk_id)
        if row is None or row.is_parent or row.text != expected:
            return 0
        pending = ChunkIndexStatus.PENDING
        rows[chunk_id] = attrs.evolve(
            row, text=text, edited=True, dense_status=pending, sparse_status=pending
        )
        return 1

    async def get_many(
        self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        await self.check("chunks.get_many")
        wanted = set(chunk_ids)
        scopes = set(self.db.chunks) | set(self.uow.pending_chunks)
        found: dict[str, ChunkRecord] = {}
        for scope in scopes:
            if scope.user_id == user_id and scope.dataset_id == dataset_id:
                found.update((c.chunk_id, c) for c in self._live(scope) if c.chunk_id in wanted)
        return [found[i] for i in dict.fromkeys(chunk_ids) if i in found]  # in the order asked

    async def _move(
        self, scope: DocumentScope, ids: Iterable[str], move: ChunkStatusMove, field: str
    ) -> int:
        if move.to in move.allowed_from:
            raise ValueError(f"{move.name} would leave some rows unchanged; not a real move")
        rows = await self._writable(scope)
        moved = 0
        for chunk_id in set(ids):
            row = rows.get(chunk_id)
            status = getattr(row, field) if row is not None else None
            if row is not None and status is not None and move.permits(status):
                rows[chunk_id] = attrs.evolve(row, **{field: move.to})
                moved += 1
        return moved

    async def move_dense(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        await self.check("chunks.move_dense")
        return await self._move(scope, chunk_ids, move, "dense_status")

    async def move_sparse(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        await self.check("chunks.move_sparse")
        return await self._move(scope, chunk_ids, move, "sparse_status")

    async def count_document(self, scope: DocumentScope) -> int:
        await self.check("chunks.count_document")
        return len(self._live(scope))

    async def delete_document(self, scope: DocumentScope) -> int:
        await self.check("chunks.delete_document")
        rows = await self._writable(scope)
        self.uow.pending_chunks[scope] = {}
        return len(rows)

    def _scopes(self) -> set[DocumentScope]:
        return set(self.db.chunks) | set(self.uow.pending_chunks)

    async def document_counts(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> Mapping[str, ChunkCounts]:
        await self.check("chunks.document_counts")
        success = ChunkIndexStatus.SUCCESS
        counts: dict[str, ChunkCounts] = {}
        for doc_id in dict.fromkeys(doc_ids):
            rows = self._live(DocumentScope(user_id, dataset_id, doc_id))
            if rows:
                counts[doc_id] = ChunkCounts(
                    parents=sum(1 for c in rows if c.is_parent),
                    children=sum(1 for c in rows if not c.is_parent),
                    dense_indexed=sum(1 for c in rows if c.dense_status is success),
                    sparse_indexed=sum(1 for c in rows if c.sparse_status is success),
                )
        return counts

    async def count_user_vectors(self, user_id: str) -> int:
        await self.check("chunks.count_user_vectors")
        may_exist = (ChunkIndexStatus.INDEXING, ChunkIndexStatus.SUCCESS, ChunkIndexStatus.FAILED)
        return sum(
            1
            for scope in self._scopes()
            if scope.user_id == user_id
            for c in self._doc(scope).values()
            if c.dense_status in may_exist
        )

    async def list_user_children(
        self,
        user_id: str,
        *,
        first: str | None = None,
        last: str | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 1000,
    ) -> list[ChunkRecord]:
        await self.check("chunks.list_user_children")
        found = sorted(
            (
                c
                for scope in self._scopes()
                if scope.user_id == user_id
                for c in self._doc(scope).values()
                if not c.is_parent
                and c.enabled
                and c.live
                and c.dense_status is ChunkIndexStatus.SUCCESS
                and (first is None or c.chunk_id >= first)
                and (last is None or c.chunk_id <= last)
                and (after is None or (c.chunk_id, c.scope.dataset_id) > after)
            ),
            key=lambda c: (c.chunk_id, c.scope.dataset_id),
        )
        return found[:limit]
