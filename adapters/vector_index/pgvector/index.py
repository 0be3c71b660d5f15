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

Metadata filters (`where`) are conditions on the points' `meta` jsonb (where.py) inside the
SQL that ranks: in the HNSW scan's filter (the iterative scan goes on until `limit` rows
passed it), in the exact rescan, and in the sparse query after the IDF (which counts every
point of the scope), so a filtered query fills `limit` whenever that many points match.

Writes are one transaction per call; dense and sparse writes set only their own part of a
row, so neither erases the other.

Generations (`VectorSpaces`, issue 21): a shadow generation is a collection of its own on
this index's engine (schema.py, `space_name`); generation 0, this collection, keeps every
generation's sparse vectors, so its sweep clears only the user's dense column.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Sequence

from sqlalchemy import BigInteger, ColumnElement, Float, and_, func, literal, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from ragline.adapters.vector_index.pgvector.rows import (
    Key,
    batches_of,
    dense_hits,
    hit_of,
    last_per_key,
    point_row,
    reason,
    term_weights,
)
from ragline.adapters.vector_index.pgvector.schema import (
    Tables,
    checked_name,
    collection_ddl,
    lock_ddl,
    register,
    registry_ddl,
    scope_key,
    space_name,
    stored_dimension,
    tables,
)
from ragline.adapters.vector_index.pgvector.where import condition
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndexError,
    VectorIndexUnavailable,
    VectorSpace,
)
from ragline.domain.metadata import DocumentMetadata, MetadataFilter

_log = logging.getLogger(__name__)
_PAYLOAD = ("doc_id", "parent_id", "extra", "meta")  # what an upsert replaces besides vectors
EF_SEARCH_MAX = 1000  # pgvector's bound on hnsw.ef_search (the iterative scan goes past it)
# Qdrant's IDF modifier over one scope's postings (module docstring); values are bound.
# The points it scores, joined back to their rows and filtered in query_sparse.
_SPARSE_SCORES = """
WITH q AS (SELECT * FROM unnest(CAST(:terms AS bigint[]), CAST(:weights AS float8[]))
           AS q(term, qw)),
n AS (SELECT count(*)::float8 AS n FROM {points}
      WHERE user_id = :u AND dataset_id = :d AND has_sparse),
df AS (SELECT t.term, count(*)::float8 AS df FROM {terms} t JOIN q USING (term)
       WHERE t.scope_key = :k GROUP BY t.term),
scored AS (SELECT t.point_id,
                  sum(q.qw * t.weight * ln((n.n - df.df + 0.5) / (df.df + 0.5) + 1)) AS score
           FROM {terms} t JOIN q USING (term) JOIN df USING (term) CROSS JOIN n
           WHERE t.scope_key = :k GROUP BY t.point_id)
SELECT point_id, score FROM scored
"""


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
    exact_scope_points: int = 20_000,
) -> PgvectorVectorIndex:
    """The index bootstrap builds from settings (no connection is made until first use)."""
    return PgvectorVectorIndex(
        url,
        collection,
        m=m,
        ef_construction=ef_construction,
        ef_search=ef_search,
        exact_scope_points=exact_scope_points,
    )


class PgvectorVectorIndex:
    """One collection: `<collection>_points` and `<collection>_terms` in the database at `url`.

    `m` and `ef_construction` shape the HNSW index when it is created (an existing index
    keeps its own); `ef_search` is the candidate list per scan step (at least `limit`);
    `max_scan_tuples` bounds an iterative scan before the exact fallback takes over.
    A query whose scope holds at most `exact_scope_points` points is answered exactly (the
    tenant's btree, then a sort): at 1M points and 100 tenants the filtered HNSW scan found
    0.73 of the true top 10 at every ef_search tried, and an exact pass over a 10k scope is
    cheaper than that scan (docs/benchmarks.md, vector search at scale).
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
        exact_scope_points: int = 20_000,
    ) -> None:
        if min(m, ef_construction, ef_search, max_scan_tuples, write_batch) < 1:
            raise ValueError("m, ef_construction, ef_search, max_scan_tuples must be positive")
        self._name = checked_name(collection)
        self._m, self._ef_construction = m, ef_construction
        self._ef_search, self._max_scan_tuples = ef_search, max_scan_tuples
        self._write_batch = write_batch
        self._exact_scope_points = max(exact_scope_points, 0)
        self._engine = create_async_engine(async_url(url), pool_pre_ping=True)
        self._dimension: int | None = None
        self._tables: Tables | None = None
        self._closed = False
        self._spaces: dict[VectorSpace, PgvectorVectorIndex] = {}
        self._owns_engine = True  # a shadow space's index borrows its base index's engine

    # -- plumbing -----------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _begin(self) -> AsyncIterator[AsyncConnection]:
        if self._closed:
            raise VectorIndexError("vector index is closed")
        try:
            async with self._engine.begin() as conn:
                yield conn
        except (OperationalError, InterfaceError, OSError) as exc:
            raise VectorIndexUnavailable(f"pgvector: {reason(exc)}") from exc
        except DBAPIError as exc:  # the server refused the statement (e.g. a table dropped)
            raise VectorIndexError(f"pgvector: {reason(exc)}") from exc

    def _use(self, dimension: int) -> Tables:
        if self._tables is None or self._dimension != dimension:
            self._dimension, self._tables = dimension, tables(self._name, dimension)
        return self._tables

    async def _known(self) -> Tables | None:
        """The collection's tables, or None while no collection exists (not cached: another
        process may create it)."""
        if self._tables is None:
            async with self._begin() as conn:
                stored = await stored_dimension(conn, self._name)
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
                f"(docs/operations.md): {reason(exc)}"
            ) from exc

    # -- port ---------------------------------------------------------------------------
    async def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        if self._tables is not None and not self._closed:
            # a registered dimension never changes: already checked, no DDL lock per call
            # (search asks `in_space(active)` for every query)
            if self._dimension != dimension:
                raise EmbeddingDimensionMismatch(
                    self._dimension or 0, dimension, f"collection {self._name}"
                )
            return
        async with self._begin() as conn:
            await lock_ddl(conn)
            stored = await stored_dimension(conn, self._name)
            if stored is None:
                await self._create_extension(conn)
                for statement in registry_ddl() + collection_ddl(
                    self._name, dimension, self._m, self._ef_construction
                ):
                    await conn.execute(text(statement))
                await register(conn, self._name, dimension)
                stored = await stored_dimension(conn, self._name)  # whoever registered it first
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
            {**point_row(p.chunk_id, p.payload), "dense": [float(x) for x in p.vector]}
            for p in last_per_key(points)
        ]
        stmt = pg_insert(t.points)
        stmt = stmt.on_conflict_do_update(
            index_elements=["user_id", "dataset_id", "chunk_id"],
            set_={c: stmt.excluded[c] for c in (*_PAYLOAD, "dense")},
        )
        async with self._begin() as conn:
            for batch in batches_of(rows, self._write_batch):
                await conn.execute(stmt, batch)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        if not points:
            return
        t = await self._required()
        latest = last_per_key(points)
        rows = [{**point_row(p.chunk_id, p.payload), "has_sparse": True} for p in latest]
        stmt = pg_insert(t.points)
        stmt = stmt.on_conflict_do_update(
            index_elements=["user_id", "dataset_id", "chunk_id"],
            set_={c: stmt.excluded[c] for c in (*_PAYLOAD, "has_sparse")},
        )
        c = t.points.c
        returning = stmt.returning(c.id, c.user_id, c.dataset_id, c.chunk_id)
        async with self._begin() as conn:
            ids: dict[Key, int] = {}
            for batch in batches_of(rows, self._write_batch):
                for r in await conn.execute(returning, batch):
                    ids[(r.user_id, r.dataset_id, r.chunk_id)] = int(r.id)
            point_ids = list(ids.values())
            for part in batches_of(point_ids, self._write_batch):
                await conn.execute(t.terms.delete().where(t.terms.c.point_id.in_(part)))
            postings = [
                {"scope_key": scope_key(p.payload.user_id, p.payload.dataset_id), "term": term,
                 "point_id": ids[(p.payload.user_id, p.payload.dataset_id, p.chunk_id)],
                 "weight": weight}
                for p in latest
                for term, weight in term_weights(p.sparse).items()
            ]  # fmt: skip
            for batch in batches_of(postings, self._write_batch):
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

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        t = await self._known()
        if t is None:
            return
        c = t.points.c
        async with self._begin() as conn:  # one UPDATE for the document's points
            await conn.execute(
                t.points.update()
                .where(c.user_id == user_id, c.dataset_id == dataset_id, c.doc_id == doc_id)
                .values(meta=metadata.indexed())
            )

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        wanted = list(dict.fromkeys(chunk_ids))
        t = await self._known() if wanted else None
        if t is None:
            return
        c = t.points.c
        async with self._begin() as conn:  # the postings go with their rows (CASCADE)
            for part in batches_of(wanted, self._write_batch):
                await conn.execute(
                    t.points.delete().where(
                        c.user_id == user_id, c.dataset_id == dataset_id, c.chunk_id.in_(part)
                    )
                )

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
        t = await self._known()
        if t is None:
            return []
        if len(vector) != self._dimension:
            raise EmbeddingDimensionMismatch(self._dimension or 0, len(vector), "query")
        c = t.points.c
        distance = c.dense.cosine_distance([float(x) for x in vector])
        scope = and_(
            c.user_id == user_id,
            c.dataset_id == dataset_id,
            c.dense.isnot(None),
            *_kept(t, where),
        )
        columns = (c.chunk_id, c.doc_id, c.parent_id, c.extra, distance.label("distance"))
        # a `+ 0` the HNSW index cannot order by: the scope's btree, then an exact sort
        exact = select(*columns).where(scope).order_by(distance + literal(0.0)).limit(limit)
        approximate = select(*columns).where(scope).order_by(distance).limit(limit)
        async with self._begin() as conn:
            if await self._small(conn, t, scope):
                rows = list((await conn.execute(exact)).all())
                _log.debug("pgvector: exact scan of a small scope (%d hits)", len(rows))
                return dense_hits(user_id, dataset_id, rows)
            await conn.execute(
                text(
                    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                    " set_config('hnsw.ef_search', :ef, true),"
                    " set_config('hnsw.max_scan_tuples', :most, true)"
                ),
                {
                    "ef": str(min(max(self._ef_search, limit), EF_SEARCH_MAX)),
                    "most": str(self._max_scan_tuples),
                },
            )
            rows = list((await conn.execute(approximate)).all())
            if len(rows) < limit:  # the iterative scan hit its bound: exact over the scope
                rows = list((await conn.execute(exact)).all())
                _log.debug("pgvector: exact rescan of a scope (%d hits)", len(rows))
        return dense_hits(user_id, dataset_id, rows)

    async def _small(self, conn: AsyncConnection, t: Tables, scope: ColumnElement[bool]) -> bool:
        """Whether the scope holds at most `exact_scope_points` points (counted up to one
        past the bound through the scope's btree, so a large scope costs a bounded count)."""
        if self._exact_scope_points == 0:
            return False
        bounded = select(literal(1)).select_from(t.points).where(scope)
        capped = bounded.limit(self._exact_scope_points + 1).subquery()
        found = (await conn.execute(select(func.count()).select_from(capped))).scalar_one()
        return int(found) <= self._exact_scope_points

    async def query_sparse(
        self,
        user_id: str,
        dataset_id: str,
        sparse: SparseVector,
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        wanted = term_weights(sparse)
        if limit < 1 or not wanted:
            return []
        t = await self._known()
        if t is None:
            return []
        sql = _SPARSE_SCORES.format(points=t.points.name, terms=t.terms.name)  # nosec B608
        scores = (
            text(sql)  # checked table names; every value bound
            .bindparams(
                terms=list(wanted),
                weights=list(wanted.values()),
                u=user_id,
                d=dataset_id,
                k=scope_key(user_id, dataset_id),
            )
            .columns(point_id=BigInteger, score=Float)
            .subquery("scored")
        )
        c = t.points.c
        query = (
            select(c.chunk_id, c.doc_id, c.parent_id, c.extra, scores.c.score)
            .join_from(scores, t.points, c.id == scores.c.point_id)
            .where(c.user_id == user_id, c.dataset_id == dataset_id, *_kept(t, where))
            .order_by(scores.c.score.desc(), c.chunk_id)
            .limit(limit)
        )
        async with self._begin() as conn:
            rows = (await conn.execute(query)).all()
        return [hit_of(user_id, dataset_id, r, float(r.score)) for r in rows]

    # -- generations (VectorSpaces): a shadow generation is a collection of its own ---------
    async def in_space(self, space: VectorSpace) -> PgvectorVectorIndex:
        index = self._space(space)
        await index.ensure_collection(space.dimension)
        return index

    def _space(self, space: VectorSpace) -> PgvectorVectorIndex:
        """This index for generation 0, else the shadow space's collection on this index's
        engine (`space_name`: its own tables, registered with its own dimension)."""
        if space.generation == 0:
            return self
        index = self._spaces.get(space)
        if index is None or index._closed:
            index = copy.copy(self)
            index._name = space_name(self._name, space.generation, space.dimension)
            index._dimension, index._tables = None, None
            index._spaces, index._owns_engine = {}, False
            self._spaces[space] = index
        return index

    async def delete_user(self, space: VectorSpace, user_id: str) -> None:
        """A shadow space loses the user's points (one DELETE; the postings cascade). The
        base space keeps every generation's sparse vectors, so it loses only the user's dense
        vectors: one DELETE of the points with no sparse vector, then one UPDATE clearing the
        dense vector of the rest, in one transaction (two statements, so the UPDATE's
        snapshot also sees a sparse write that committed while the DELETE ran)."""
        index = self._space(space)
        t = await index._known()
        if t is None:
            return  # a space never written
        if index._dimension != space.dimension:
            raise EmbeddingDimensionMismatch(
                index._dimension or 0, space.dimension, f"collection {index._name}"
            )
        c = t.points.c
        async with index._begin() as conn:
            if space.generation > 0:
                await conn.execute(t.points.delete().where(c.user_id == user_id))
                return
            await conn.execute(t.points.delete().where(c.user_id == user_id, ~c.has_sparse))
            await conn.execute(
                t.points.update()
                .where(c.user_id == user_id, c.dense.isnot(None))
                .values(dense=None)
            )

    async def close(self) -> None:
        """Closing the base index closes every space's (they share its engine)."""
        if self._closed:
            return
        self._closed = True
        for index in self._spaces.values():
            await index.close()
        if self._owns_engine:
            await self._engine.dispose()


def _kept(t: Tables, where: MetadataFilter | None) -> list[ColumnElement[bool]]:
    """The filter's condition on the points' `meta` (none without a filter)."""
    return [] if where is None else [condition(t.points.c.meta, where)]
