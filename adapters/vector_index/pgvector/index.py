"""VectorIndex on PostgreSQL + pgvector (the layout and why it is not in Alembic: schema.py).

Dense: cosine distance (`<=>`) over an HNSW index. Every query is scoped by user_id +
dataset_id, and an HNSW scan that filters after its candidate list (ef_search rows) returns
fewer than `limit` hits when the scope is a small part of the table. So each dense query
runs with pgvector 0.8's iterative index scan (`hnsw.iterative_scan = relaxed_order`: the
scan goes on until `limit` rows passed the filter or `hnsw.max_scan_tuples` were visited),
re-sorts what it got by distance, and if it still got fewer than `limit` rows it redoes the
query exactly (ORDER BY an expression the index cannot serve, over the scope's btree): a
scope holding at least `limit` dense points always yields `limit` hits.

Sparse: Qdrant's IDF modifier, computed in SQL from the postings table: score = sum over
query terms t present in the point of q_t * w_t * ln((N - n_t + 0.5) / (n_t + 0.5) + 1),
N = the scope's points with a sparse vector, n_t = those holding t (as the embedded index).
pgvector's `sparsevec` offers inner product, cosine and L2 only, with no document frequency
per term, so it cannot rank by IDF; the postings can, reading only the query's terms.

Writes are one transaction per call; dense and sparse writes set only their own part of a
row, so neither erases the other.
"""

from __future__ import annotations

import contextlib
import logging
import zlib
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import and_, literal, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from ragline.adapters.vector_index.pgvector.schema import (
    LAYOUT,
    REGISTRY,
    Tables,
    checked_name,
    collection_ddl,
    registry_ddl,
    tables,
)
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndexError,
    VectorIndexUnavailable,
)

_log = logging.getLogger(__name__)
T = TypeVar("T", DensePoint, SparsePoint)
LOCK_KEY = zlib.crc32(REGISTRY.encode())  # the advisory lock serialising the DDL
MAX_TERM = 2**63 - 1
Key = tuple[str, str, str]
# Qdrant's IDF modifier over one scope's postings (module docstring); values are bound
_SPARSE_QUERY = """
WITH q AS (SELECT * FROM unnest(CAST(:terms AS bigint[]), CAST(:weights AS float8[]))
           AS q(term, qw)),
n AS (SELECT count(*)::float8 AS n FROM {points}
      WHERE user_id = :u AND dataset_id = :d AND has_sparse),
df AS (SELECT t.term, count(*)::float8 AS df FROM {terms} t JOIN q USING (term)
       WHERE t.user_id = :u AND t.dataset_id = :d GROUP BY t.term),
scored AS (SELECT t.chunk_id,
                  sum(q.qw * t.weight * ln((n.n - df.df + 0.5) / (df.df + 0.5) + 1)) AS score
           FROM {terms} t JOIN q USING (term) JOIN df USING (term) CROSS JOIN n
           WHERE t.user_id = :u AND t.dataset_id = :d
           GROUP BY t.chunk_id ORDER BY score DESC, t.chunk_id LIMIT :limit)
SELECT p.chunk_id, p.doc_id, p.parent_id, p.extra, s.score
FROM scored s JOIN {points} p
     ON p.user_id = :u AND p.dataset_id = :d AND p.chunk_id = s.chunk_id
ORDER BY s.score DESC, s.chunk_id
"""
_REGISTRY_EXISTS = (
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
    " ON n.oid = c.relnamespace WHERE c.relname = :t AND n.nspname = current_schema())"
)


def async_url(url: str | URL) -> URL:
    """The URL with psycopg's async driver (accepts postgresql:// and postgresql+psycopg://)."""
    parsed = make_url(url)
    if parsed.get_backend_name() not in ("postgresql", "postgres"):
        raise ValueError(f"pgvector needs a PostgreSQL URL, not {parsed.get_backend_name()}")
    return parsed.set(drivername="postgresql+psycopg")


def open_pgvector_index(
    url: str,
    collection: str = "ragline_chunks",
    *,
    m: int = 16,
    ef_construction: int = 64,
    ef_search: int = 40,
) -> PgvectorVectorIndex:
    """The index bootstrap builds from settings (no connection is made until first use)."""
    return PgvectorVectorIndex(
        url, collection, m=m, ef_construction=ef_construction, ef_search=ef_search
    )


class PgvectorVectorIndex:
    """One collection: `<collection>_points` and `<collection>_terms` in the database at `url`.

    `m` and `ef_construction` shape the HNSW index when it is created (an existing index
    keeps its own); `ef_search` is the candidate list per scan step (at least `limit`);
    `max_scan_tuples` bounds an iterative scan before the exact fallback takes over.
    """

    def __init__(
        self,
        url: str | URL,
        collection: str = "ragline_chunks",
        *,
        m: int = 16,
        ef_construction: int = 64,
        ef_search: int = 40,
        max_scan_tuples: int = 20_000,
        write_batch: int = 1000,
    ) -> None:
        if min(m, ef_construction, ef_search, max_scan_tuples, write_batch) < 1:
            raise ValueError("m, ef_construction, ef_search, max_scan_tuples must be positive")
        self._name = checked_name(collection)
        self._m, self._ef_construction = m, ef_construction
        self._ef_search, self._max_scan_tuples = ef_search, max_scan_tuples
        self._write_batch = write_batch
        self._engine = create_async_engine(async_url(url), pool_pre_ping=True)
        self._dimension: int | None = None
        self._tables: Tables | None = None
        self._closed = False

    # -- plumbing -----------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _begin(self) -> AsyncIterator[AsyncConnection]:
        if self._closed:
            raise VectorIndexError("vector index is closed")
        try:
            async with self._engine.begin() as conn:
                yield conn
        except (OperationalError, InterfaceError, OSError) as exc:
            raise VectorIndexUnavailable(f"pgvector: {_reason(exc)}") from exc

    async def _stored_dimension(self, conn: AsyncConnection) -> int | None:
        # pg_class read under the statement's snapshot, not to_regclass: that one answers
        # from the backend's catalog cache, whose "no such table" from an earlier
        # transaction outlives another worker's commit while we waited for the lock
        present = await conn.execute(text(_REGISTRY_EXISTS), {"t": REGISTRY})
        if not present.scalar_one():
            return None
        row = (
            await conn.execute(
                text(f"SELECT dimension, layout FROM {REGISTRY} WHERE name = :n"),  # nosec B608
                {"n": self._name},
            )
        ).first()
        if row is None:
            return None
        if int(row.layout) != LAYOUT:
            raise VectorIndexError(
                f"collection {self._name!r} has layout {row.layout}, this ragline knows {LAYOUT}"
            )
        return int(row.dimension)

    def _use(self, dimension: int) -> Tables:
        if self._tables is None or self._dimension != dimension:
            self._dimension, self._tables = dimension, tables(self._name, dimension)
        return self._tables

    async def _known(self) -> Tables | None:
        """The collection's tables, or None while no collection exists (not cached: another
        process may create it)."""
        if self._tables is None:
            async with self._begin() as conn:
                stored = await self._stored_dimension(conn)
            if stored is None:
                return None
            self._use(stored)
        return self._tables

    async def _required(self) -> Tables:
        known = await self._known()
        if known is None:
            raise VectorIndexError("collection missing: call ensure_collection first")
        return known

    @staticmethod
    async def _create_extension(conn: AsyncConnection) -> None:
        installed = await conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'"))
        if installed.first() is not None:
            return
        try:
            async with conn.begin_nested():
                await conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        except DBAPIError as exc:
            raise VectorIndexUnavailable(
                "pgvector: the vector extension is not installed in this database and this "
                "role cannot install it; run CREATE EXTENSION vector as the database owner "
                f"(docs/operations.md): {_reason(exc)}"
            ) from exc

    # -- port ---------------------------------------------------------------------------
    async def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        async with self._begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": LOCK_KEY})
            stored = await self._stored_dimension(conn)
            if stored is None:
                await self._create_extension(conn)
                for statement in registry_ddl() + collection_ddl(
                    self._name, dimension, self._m, self._ef_construction
                ):
                    await conn.execute(text(statement))
                await conn.execute(
                    text(
                        f"INSERT INTO {REGISTRY} (name, dimension, layout)"  # nosec B608
                        " VALUES (:n, :d, :l) ON CONFLICT (name) DO NOTHING"
                    ),
                    {"n": self._name, "d": dimension, "l": LAYOUT},
                )
                stored = await self._stored_dimension(conn)  # whoever registered it first
        assert stored is not None  # nosec B101
        if stored != dimension:
            raise EmbeddingDimensionMismatch(stored, dimension, f"collection {self._name}")
        self._use(stored)

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        if not points:
            return
        t = await self._required()
        dimension = self._dimension
        for point in points:
            if len(point.vector) != dimension:
                raise EmbeddingDimensionMismatch(dimension or 0, len(point.vector), point.chunk_id)
        rows = [
            {**_row(p.chunk_id, p.payload), "dense": [float(x) for x in p.vector]}
            for p in _last_per_key(points)
        ]
        stmt = pg_insert(t.points)
        stmt = stmt.on_conflict_do_update(
            index_elements=["user_id", "dataset_id", "chunk_id"],
            set_={c: stmt.excluded[c] for c in ("doc_id", "parent_id", "extra", "dense")},
        )
        async with self._begin() as conn:
            for batch in _batches(rows, self._write_batch):
                await conn.execute(stmt, batch)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        if not points:
            return
        t = await self._required()
        latest = _last_per_key(points)
        rows = [{**_row(p.chunk_id, p.payload), "has_sparse": True} for p in latest]
        stmt = pg_insert(t.points)
        stmt = stmt.on_conflict_do_update(
            index_elements=["user_id", "dataset_id", "chunk_id"],
            set_={c: stmt.excluded[c] for c in ("doc_id", "parent_id", "extra", "has_sparse")},
        )
        postings = [
            {"user_id": p.payload.user_id, "dataset_id": p.payload.dataset_id,
             "chunk_id": p.chunk_id, "term": term, "weight": weight}
            for p in latest
            for term, weight in _terms(p.sparse).items()
        ]  # fmt: skip
        scopes: dict[tuple[str, str], list[str]] = {}
        for p in latest:
            scopes.setdefault((p.payload.user_id, p.payload.dataset_id), []).append(p.chunk_id)
        terms = t.terms.c
        async with self._begin() as conn:
            for batch in _batches(rows, self._write_batch):
                await conn.execute(stmt, batch)
            for (user_id, dataset_id), chunk_ids in scopes.items():
                for part in _batches(chunk_ids, self._write_batch):
                    await conn.execute(
                        t.terms.delete().where(
                            terms.user_id == user_id,
                            terms.dataset_id == dataset_id,
                            terms.chunk_id.in_(part),
                        )
                    )
            for batch in _batches(postings, self._write_batch):
                await conn.execute(t.terms.insert(), batch)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        t = await self._known()
        if t is None:
            return
        c = t.points.c
        async with self._begin() as conn:  # the postings go with their rows (CASCADE)
            await conn.execute(
                t.points.delete().where(
                    c.user_id == user_id, c.dataset_id == dataset_id, c.doc_id == doc_id
                )
            )

    async def query_dense(
        self, user_id: str, dataset_id: str, vector: Sequence[float], limit: int
    ) -> list[VectorHit]:
        if limit < 1:
            return []
        t = await self._known()
        if t is None:
            return []
        if len(vector) != self._dimension:
            raise EmbeddingDimensionMismatch(self._dimension or 0, len(vector), "query")
        c = t.points.c
        distance = c.dense.cosine_distance([float(x) for x in vector])
        scope = and_(c.user_id == user_id, c.dataset_id == dataset_id, c.dense.isnot(None))
        columns = (c.chunk_id, c.doc_id, c.parent_id, c.extra, distance.label("distance"))
        approximate = select(*columns).where(scope).order_by(distance).limit(limit)
        async with self._begin() as conn:
            await conn.execute(
                text(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                    " set_config('hnsw.ef_search', :ef, true),"
                    " set_config('hnsw.max_scan_tuples', :most, true)"
                ),
                {"ef": str(max(self._ef_search, limit)), "most": str(self._max_scan_tuples)},
            )
            rows = list((await conn.execute(approximate)).all())
            if len(rows) < limit:  # a `+ 0` the index cannot order by: exact over the scope
                exact = select(*columns).where(scope).order_by(distance + literal(0.0))
                rows = list((await conn.execute(exact.limit(limit))).all())
                _log.debug("pgvector: exact rescan of a scope (%d hits)", len(rows))
        rows.sort(key=lambda r: (float(r.distance), str(r.chunk_id)))  # relaxed_order
        return [_hit(user_id, dataset_id, r, 1.0 - float(r.distance)) for r in rows]

    async def query_sparse(
        self, user_id: str, dataset_id: str, sparse: SparseVector, limit: int
    ) -> list[VectorHit]:
        wanted = _terms(sparse)
        if limit < 1 or not wanted:
            return []
        t = await self._known()
        if t is None:
            return []
        points, terms = t.points.name, t.terms.name
        sql = _SPARSE_QUERY.format(points=points, terms=terms)  # checked names  # nosec B608
        query = text(sql)
        params = {
            "terms": list(wanted),
            "weights": list(wanted.values()),
            "u": user_id,
            "d": dataset_id,
            "limit": limit,
        }
        async with self._begin() as conn:
            rows = (await conn.execute(query, params)).all()
        return [_hit(user_id, dataset_id, r, float(r.score)) for r in rows]

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._engine.dispose()


def _row(chunk_id: str, payload: ChunkPayload) -> dict[str, Any]:
    return {
        "user_id": payload.user_id,
        "dataset_id": payload.dataset_id,
        "chunk_id": chunk_id,
        "doc_id": payload.doc_id,
        "parent_id": payload.parent_id,
        "extra": dict(payload.extra),
        "has_sparse": False,
    }


def _hit(user_id: str, dataset_id: str, row: Any, score: float) -> VectorHit:
    """A hit from a result row (chunk_id, doc_id, parent_id, extra, ...)."""
    extra = row.extra or {}
    return VectorHit(
        chunk_id=str(row.chunk_id),
        score=score,
        payload=ChunkPayload(
            user_id=user_id,
            dataset_id=dataset_id,
            doc_id=str(row.doc_id),
            parent_id=row.parent_id,
            extra={str(k): str(v) for k, v in extra.items()},
        ),
    )


def _terms(sparse: SparseVector) -> dict[int, float]:
    """Term -> weight (a repeated term keeps its last weight; out-of-range terms dropped)."""
    return {
        int(term): float(value)
        for term, value in zip(sparse.indices, sparse.values, strict=True)
        if 0 <= int(term) <= MAX_TERM
    }


def _last_per_key(points: Sequence[T]) -> list[T]:
    """One point per (scope, chunk_id), the last given, in key order: one INSERT may not
    touch a row twice, and a fixed order keeps concurrent writers from deadlocking."""
    latest: dict[Key, T] = {}
    for point in points:
        latest[(point.payload.user_id, point.payload.dataset_id, point.chunk_id)] = point
    return [latest[key] for key in sorted(latest)]


def _batches(items: Sequence[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _reason(exc: BaseException) -> str:
    """The driver's message, without the statement and its (vector-sized) parameters."""
    orig = getattr(exc, "orig", None)
    return f"{type(orig or exc).__name__}: {orig or exc}".strip()
