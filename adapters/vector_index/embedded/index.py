"""VectorIndex in one SQLite file with exact numpy search: the embedded default.

Writes are one transaction per call (executemany UPSERTs that set only the vector column
being written, plus the payload), so dense and sparse vectors of a chunk arrive separately
and never erase each other, and nothing per point stays in Python memory after the call.
Queries load one scope's vectors into numpy arrays (a dense matrix, or sparse postings sorted
by term) and keep them per (scope, generation): a search batch pays the load once, and a
write by any process bumps the generation so the next query reloads. Payloads are read from
SQLite only for the hits.

Blocking SQLite and numpy work runs in a worker thread (asyncio.to_thread); no transaction
is ever held across an await. Small calls (a pipeline batch: up to INLINE_POINTS points; the
document check before a delete; ensure_collection) first try on the event loop's thread
with SQLite's busy handler off: on a local WAL file they take a millisecond or less, less
than the thread hop. If the write lock (or, rarely, a read) would have to wait, SQLite says
SQLITE_BUSY at once, nothing has been written, and the call goes to a worker thread and
waits there as before.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from ragline.adapters.vector_index.embedded.arrays import (
    DenseMatrix,
    Ids,
    Scores,
    SparseColumns,
    dense_blobs,
    sparse_blobs,
)
from ragline.adapters.vector_index.embedded.cache import ScopeCache
from ragline.adapters.vector_index.embedded.rows import (
    extra_json,
    largest_scope_points,
    meta_json,
    user_dense_removed,
    user_points_removed,
)
from ragline.adapters.vector_index.embedded.store import (
    Connections,
    FormatMismatch,
    PoolClosed,
    transaction,
)
from ragline.adapters.vector_index.embedded.where import condition
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndexError,
    VectorIndexUnavailable,
    VectorSpace,
)
from ragline.domain.metadata import DocumentMetadata, MetadataFilter

T = TypeVar("T")
DENSE, SPARSE = "dense", "sparse"
IN_BATCH = 500  # ids per `WHERE id IN (...)` (well under SQLite's variable limit)
INLINE_POINTS = 256  # a write of at most this many points may run on the event loop
WHERE = "the embedded vector index"  # in errors, instead of the file's path
_BUSY = object()  # an inline attempt that would have waited for a lock

_UPSERT = """
INSERT INTO points (scope_id, chunk_id, doc_id, parent_id, extra, meta, {column})
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (scope_id, chunk_id) DO UPDATE SET
    doc_id = excluded.doc_id,
    parent_id = excluded.parent_id,
    extra = excluded.extra,
    meta = excluded.meta,
    {column} = excluded.{column}
"""
_BUMP = "UPDATE scopes SET {column}_generation = {column}_generation + 1 WHERE id = ?"


class EmbeddedVectorIndex:
    """All scopes in `<path>/vectors.sqlite3`; `path` is a directory, created on first use.

    Several instances and processes may share one path. `cache_mb` bounds the loaded scope
    arrays this instance keeps between queries (the scope being queried is always kept).
    """

    def __init__(
        self, path: str | Path, *, busy_timeout_ms: int = 30_000, cache_mb: int = 1024
    ) -> None:
        self._path, self._busy_timeout_ms, self._cache_mb = Path(path), busy_timeout_ms, cache_mb
        self._spaces: dict[VectorSpace, EmbeddedVectorIndex] = {}
        self._connections = Connections(Path(path), busy_timeout_ms)
        self._cache: ScopeCache[DenseMatrix | SparseColumns] = ScopeCache(cache_mb * 2**20)
        self._dimension: int | None = None
        self._closed = False

    # -- plumbing -----------------------------------------------------------------------
    async def _run(self, call: Callable[[sqlite3.Connection], T], *, inline: bool = False) -> T:
        """`call` on a pooled connection in a worker thread; with `inline`, first on this
        thread if it can run without waiting for a lock (see the module docstring)."""
        if self._closed:
            raise VectorIndexError("vector index is closed")
        if inline:
            done = self._guard(lambda: self._inline(call))
            if done is not _BUSY:
                return done  # type: ignore[return-value]
        return await asyncio.to_thread(self._guard, lambda: self._pooled(call))

    def _guard(self, run: Callable[[], T]) -> T:
        try:
            return run()
        except PoolClosed as exc:
            raise VectorIndexError("vector index is closed") from exc
        except (sqlite3.Error, OSError, FormatMismatch) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise VectorIndexUnavailable(f"{WHERE}: {reason}") from exc  # not the file's path

    def _pooled(self, call: Callable[[sqlite3.Connection], T]) -> T:
        with self._connections.borrow() as connection:
            return call(connection)

    def _inline(self, call: Callable[[sqlite3.Connection], T]) -> T | object:
        with self._connections.borrow_idle() as connection:
            if connection is None:
                return _BUSY
            try:
                return call(connection)
            except sqlite3.OperationalError as exc:
                # only a lock wait is retried, and only before anything was written
                if _is_busy(exc) and not connection.in_transaction:
                    return _BUSY
                raise

    def _stored_dimension(self, connection: sqlite3.Connection) -> int | None:
        if self._dimension is None:
            row = connection.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone()
            if row is not None:
                self._dimension = int(row[0])
        return self._dimension

    def _required_dimension(self, connection: sqlite3.Connection) -> int:
        dimension = self._stored_dimension(connection)
        if dimension is None:
            raise VectorIndexError("collection missing: call ensure_collection first")
        return dimension

    @staticmethod
    def _scope_ids(
        connection: sqlite3.Connection, payloads: Iterable[ChunkPayload]
    ) -> dict[tuple[str, str], int]:
        ids: dict[tuple[str, str], int] = {}
        for scope in {(p.user_id, p.dataset_id) for p in payloads}:
            connection.execute(
                "INSERT INTO scopes (user_id, dataset_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                scope,
            )
            (ids[scope],) = connection.execute(
                "SELECT id FROM scopes WHERE user_id = ? AND dataset_id = ?", scope
            ).fetchone()
        return ids

    def _write(
        self,
        connection: sqlite3.Connection,
        column: str,
        chunks: Sequence[tuple[str, ChunkPayload]],
        blobs: list[bytes],
    ) -> None:
        """Upsert one vector column (and the payloads) of a batch in one transaction, bumping
        the generation of every scope it touches."""
        with transaction(connection, write=True):
            scopes = self._scope_ids(connection, (payload for _, payload in chunks))
            connection.executemany(
                _UPSERT.format(column=column),
                (
                    (
                        scopes[(p.user_id, p.dataset_id)],
                        chunk_id,
                        p.doc_id,
                        p.parent_id,
                        extra_json(p.extra),
                        meta_json(p.metadata),
                        blob,
                    )
                    for (chunk_id, p), blob in zip(chunks, blobs, strict=True)
                ),
            )
            connection.executemany(_BUMP.format(column=column), [(i,) for i in scopes.values()])
        for scope_id in scopes.values():
            self._cache.drop((column, scope_id))

    def _scope(
        self, connection: sqlite3.Connection, user_id: str, dataset_id: str, column: str
    ) -> tuple[int, int] | None:
        row = connection.execute(
            f"SELECT id, {column}_generation FROM scopes "  # column: a literal  # nosec B608
            "WHERE user_id = ? AND dataset_id = ?",
            (user_id, dataset_id),
        ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    @staticmethod
    def _hits(
        connection: sqlite3.Connection, user_id: str, dataset_id: str, ids: Ids, scores: Scores
    ) -> list[VectorHit]:
        wanted = [int(i) for i in ids]
        rows: dict[int, tuple[str, str, str | None, str | None]] = {}
        for start in range(0, len(wanted), IN_BATCH):
            part = wanted[start : start + IN_BATCH]
            marks = ",".join("?" * len(part))
            for row_id, chunk_id, doc_id, parent_id, extra in connection.execute(
                "SELECT id, chunk_id, doc_id, parent_id, extra FROM points "  # only ? marks  # nosec B608
                f"WHERE id IN ({marks})",
                part,
            ):
                rows[row_id] = (chunk_id, doc_id, parent_id, extra)
        hits: list[VectorHit] = []
        for row_id, score in zip(wanted, scores.tolist(), strict=True):
            chunk_id, doc_id, parent_id, extra = rows[row_id]  # same snapshot: always there
            payload = ChunkPayload(
                user_id=user_id,
                dataset_id=dataset_id,
                doc_id=doc_id,
                parent_id=parent_id,
                extra=json.loads(extra) if extra else {},
            )
            hits.append(VectorHit(chunk_id=chunk_id, score=float(score), payload=payload))
        return hits

    # -- port ---------------------------------------------------------------------------
    async def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        if self._dimension is not None and not self._closed:
            # the stored dimension is written once and never changes: already checked
            if self._dimension != dimension:
                raise EmbeddingDimensionMismatch(self._dimension, dimension, WHERE)
            return

        def ensure(connection: sqlite3.Connection) -> int:
            with transaction(connection, write=True):
                row = connection.execute(
                    "SELECT value FROM meta WHERE key = 'dimension'"
                ).fetchone()
                if row is not None:
                    return int(row[0])
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES ('dimension', ?)", (str(dimension),)
                )
                return dimension

        stored = await self._run(ensure, inline=True)
        self._dimension = stored
        if stored != dimension:
            raise EmbeddingDimensionMismatch(stored, dimension, WHERE)

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        if not points:
            return

        def write(connection: sqlite3.Connection) -> None:
            dimension = self._required_dimension(connection)
            for point in points:
                if len(point.vector) != dimension:
                    raise EmbeddingDimensionMismatch(dimension, len(point.vector), point.chunk_id)
            blobs = dense_blobs([p.vector for p in points], dimension)
            self._write(connection, DENSE, [(p.chunk_id, p.payload) for p in points], blobs)

        await self._run(write, inline=len(points) <= INLINE_POINTS)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        if not points:
            return

        def write(connection: sqlite3.Connection) -> None:
            self._required_dimension(connection)
            blobs = sparse_blobs([p.sparse for p in points])
            self._write(connection, SPARSE, [(p.chunk_id, p.payload) for p in points], blobs)

        await self._run(write, inline=len(points) <= INLINE_POINTS)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        def absent(connection: sqlite3.Connection) -> bool:
            """Nothing of the document is stored (one snapshot): the delete would change
            nothing, so it needs neither the write lock nor a worker thread."""
            row = connection.execute(
                "SELECT 1 FROM scopes JOIN points ON points.scope_id = scopes.id"
                " WHERE scopes.user_id = ? AND scopes.dataset_id = ? AND points.doc_id = ?"
                " LIMIT 1",
                (user_id, dataset_id, doc_id),
            ).fetchone()
            return row is None

        if await self._run(absent, inline=True):
            return

        def delete(connection: sqlite3.Connection) -> int | None:
            with transaction(connection, write=True):
                scope = self._scope(connection, user_id, dataset_id, DENSE)
                if scope is None:
                    return None
                deleted = connection.execute(
                    "DELETE FROM points WHERE scope_id = ? AND doc_id = ?", (scope[0], doc_id)
                ).rowcount
                if deleted:
                    for column in (DENSE, SPARSE):
                        connection.execute(_BUMP.format(column=column), (scope[0],))
                return scope[0]

        scope_id = await self._run(delete)
        if scope_id is not None:
            for column in (DENSE, SPARSE):
                self._cache.drop((column, scope_id))

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        def relabel(connection: sqlite3.Connection) -> None:
            with transaction(connection, write=True):
                connection.execute(
                    "UPDATE points SET meta = ? WHERE doc_id = ? AND scope_id ="
                    " (SELECT id FROM scopes WHERE user_id = ? AND dataset_id = ?)",
                    (meta_json(metadata), doc_id, user_id, dataset_id),
                )

        await self._run(relabel)

    @staticmethod
    def _allowed(
        connection: sqlite3.Connection, scope_id: int, column: str, where: MetadataFilter | None
    ) -> Ids | None:
        """The ids of the scope's points `where` keeps (None: no filter), read in the
        caller's snapshot; the search then ranks only those."""
        if where is None:
            return None
        params: list[object] = [scope_id]
        sql = condition(where, params)
        rows = connection.execute(
            f"SELECT id FROM points WHERE scope_id = ? AND {column} IS NOT NULL"  # nosec B608
            f" AND {sql}",  # only ? marks: the condition's values are parameters
            params,
        ).fetchall()
        return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return

        def delete(connection: sqlite3.Connection) -> int | None:
            with transaction(connection, write=True):
                scope = self._scope(connection, user_id, dataset_id, DENSE)
                if scope is None:
                    return None
                deleted = 0
                for start in range(0, len(ids), 500):
                    part = ids[start : start + 500]
                    marks = ", ".join("?" * len(part))
                    deleted += connection.execute(
                        f"DELETE FROM points WHERE scope_id = ? AND chunk_id IN ({marks})",  # nosec B608
                        (scope[0], *part),
                    ).rowcount
                if deleted:
                    for column in (DENSE, SPARSE):
                        connection.execute(_BUMP.format(column=column), (scope[0],))
                return scope[0]

        scope_id = await self._run(delete)
        if scope_id is not None:
            for column in (DENSE, SPARSE):
                self._cache.drop((column, scope_id))

    async def query_dense(
        self,
        user_id: str,
        dataset_id: str,
        vector: Sequence[float],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        if limit < 1:
            return []
        if self._dimension is not None and len(vector) != self._dimension:
            raise EmbeddingDimensionMismatch(self._dimension, len(vector), "query")
        query = np.asarray(vector, dtype=np.float32)

        def search(connection: sqlite3.Connection) -> list[VectorHit]:
            with transaction(connection, write=False):
                scope = self._scope(connection, user_id, dataset_id, DENSE)
                dimension = self._stored_dimension(connection)
                if scope is None or dimension is None:
                    return []
                if len(query) != dimension:
                    raise EmbeddingDimensionMismatch(dimension, len(query), "query")
                key, generation = (DENSE, scope[0]), scope[1]
                matrix = self._cache.get(key, generation)
                if not isinstance(matrix, DenseMatrix):
                    matrix = DenseMatrix.load(connection, scope[0], dimension)
                    self._cache.put(key, generation, matrix)
                allowed = self._allowed(connection, scope[0], DENSE, where)
                ids, scores = matrix.search(query, limit, allowed)
                return self._hits(connection, user_id, dataset_id, ids, scores)

        return await self._run(search)

    async def query_sparse(
        self,
        user_id: str,
        dataset_id: str,
        sparse: SparseVector,
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        if limit < 1 or sparse.is_empty():
            return []

        def search(connection: sqlite3.Connection) -> list[VectorHit]:
            with transaction(connection, write=False):
                scope = self._scope(connection, user_id, dataset_id, SPARSE)
                if scope is None:
                    return []
                key, generation = (SPARSE, scope[0]), scope[1]
                columns = self._cache.get(key, generation)
                if not isinstance(columns, SparseColumns):
                    columns = SparseColumns.load(connection, scope[0])
                    self._cache.put(key, generation, columns)
                allowed = self._allowed(connection, scope[0], SPARSE, where)
                ids, scores = columns.search(sparse, limit, allowed)
                return self._hits(connection, user_id, dataset_id, ids, scores)

        return await self._run(search)

    # -- generations (VectorSpaces): a shadow generation's space is a file of its own -------
    async def in_space(self, space: VectorSpace) -> EmbeddedVectorIndex:
        if space.generation == 0:
            await self.ensure_collection(space.dimension)
            return self
        index = self._spaces.get(space)
        if index is None:
            index = EmbeddedVectorIndex(
                self._path / "spaces" / f"g{space.generation}-d{space.dimension}",
                busy_timeout_ms=self._busy_timeout_ms,
                cache_mb=self._cache_mb,
            )
            self._spaces[space] = index
        await index.ensure_collection(space.dimension)
        return index

    async def delete_user(self, space: VectorSpace, user_id: str) -> None:
        """A shadow space loses the user's points; the base space (which keeps every
        generation's sparse vectors) only their dense vectors."""
        index = await self.in_space(space)
        if space.generation == 0:
            for scope_id in await index._run(lambda c: user_dense_removed(c, user_id)):
                index._cache.drop((DENSE, scope_id))
            return
        for scope_id in await index._run(lambda c: user_points_removed(c, user_id)):
            for column in (DENSE, SPARSE):
                index._cache.drop((column, scope_id))

    async def largest_scope(self) -> int:
        return await self._run(largest_scope_points)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for index in self._spaces.values():
            await index.close()
        self._cache.clear()
        await asyncio.to_thread(self._connections.close)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED (any extended code): a lock is held elsewhere."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(error)
