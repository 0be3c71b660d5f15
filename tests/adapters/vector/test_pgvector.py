"""PgvectorVectorIndex through the whole VectorIndex kit on a real PostgreSQL 16+ with
pgvector 0.8 (the session's `pgvector_url` server), plus what is specific to it: the HNSW
path itself keeps a small tenant's top_k (and without the iterative scan it would not),
the layout survives reopening (and a layout-1 collection gains `meta`), concurrent
ensure_collection, the extension error, a metadata filter inside the HNSW scan. The shadow
spaces' own checks (names, registry, set-based sweeps) are in test_pgvector_spaces.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from urllib.parse import quote

import attrs
import psycopg
import pytest

from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.vector_index import (
    DensePoint,
    VectorIndex,
    VectorIndexError,
    VectorIndexUnavailable,
)
from ragline.domain.metadata import DocumentMetadata, Eq, Exists
from ragline.testing.kits.vector_index import (
    DATASET,
    DIM,
    E1,
    E2,
    USER,
    FilteredTopKContract,
    IdfSparseRankingContract,
    MetadataFilterContract,
    VectorIndexContract,
    VectorSpacesContract,
    dense,
    ids,
    labelled,
    payload,
    sparse,
    sv,
)


def fresh_name() -> str:
    return f"kit_{uuid.uuid4().hex[:12]}"


@contextlib.contextmanager
def fresh_database(server_url: str, owner: str = "postgres") -> Iterator[str]:
    """A new database on the session's server (the URL to reach it as `owner`), dropped after."""
    name = f"db_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" OWNER "{owner}"')
    try:
        yield server_url.replace(
            "postgresql://postgres:@/postgres", f"postgresql://{owner}@/{name}"
        )
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


class TestPgvectorVectorIndex(
    VectorIndexContract,
    IdfSparseRankingContract,
    FilteredTopKContract,
    MetadataFilterContract,
    VectorSpacesContract,
):
    @pytest.fixture
    async def vector_index(self, pgvector_url: str) -> AsyncIterator[VectorIndex]:
        yield PgvectorVectorIndex(pgvector_url, fresh_name())


class TestPgvectorHnswPath(FilteredTopKContract):
    """The FilteredTopK kit again, with sorting priced out of the planner's reach
    (`enable_sort=off` for the adapter's sessions): the scope's btree plus a sort loses, so
    the HNSW index scan serves the query, and the exact rescan must not be what saved it."""

    @pytest.fixture
    async def ready(
        self, pgvector_url: str, caplog: pytest.LogCaptureFixture
    ) -> AsyncIterator[VectorIndex]:
        url = f"{pgvector_url}&options={quote('-c enable_sort=off')}"
        index = PgvectorVectorIndex(url, fresh_name(), exact_scope_points=0)  # always HNSW
        await index.ensure_collection(DIM)
        caplog.set_level(logging.DEBUG, "ragline.adapters.vector_index.pgvector")
        yield index
        await index.close()
        rescans = [r for r in caplog.get_records("call") if "exact rescan" in r.getMessage()]
        assert len(rescans) == 1  # only the query for more hits than the scope holds


async def test_a_filter_is_applied_inside_the_hnsw_scan(
    pgvector_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Sorting priced out (as TestPgvectorHnswPath), one tenant: 1980 of Bob's points around
    the query, 20 of Ann's away from it. Filtered on Ann, the top 10 are hers from the HNSW
    scan itself (no exact rescan): the filter runs while the index ranks, where a filter
    after the index's first candidates would have kept none."""
    url = f"{pgvector_url}&options={quote('-c enable_sort=off')}"
    index = PgvectorVectorIndex(url, fresh_name(), exact_scope_points=0)  # always HNSW
    await index.ensure_collection(DIM)
    rng = random.Random(20)  # fixed test data  # nosec B311

    def point(chunk_id: str, direction: list[float], spread: float, author: str) -> DensePoint:
        vector = [x + rng.gauss(0, spread) for x in direction]
        labels = DocumentMetadata({"author": author})
        return DensePoint(chunk_id, vector, attrs.evolve(payload(doc_id=author), metadata=labels))

    crowd = [point(f"bob-{i}", E1, 0.05, "Bob") for i in range(1980)]
    for start in range(0, len(crowd), 500):
        await index.upsert_dense(crowd[start : start + 500])
    await index.upsert_dense(
        [point(f"ann-{i}", [0.0, 0.5, 0.5, 0.5], 0.4, "Ann") for i in range(20)]
    )
    caplog.set_level(logging.DEBUG, "ragline.adapters.vector_index.pgvector")
    assert all(i.startswith("bob-") for i in ids(await index.query_dense(USER, DATASET, E1, 10)))
    hits = await index.query_dense(USER, DATASET, E1, 10, Eq("author", "Ann"))
    assert len(hits) == 10 and all(h.chunk_id.startswith("ann-") for h in hits)
    assert not [r for r in caplog.records if "exact rescan" in r.getMessage()]
    await index.close()


async def test_a_small_scope_is_answered_exactly_even_where_hnsw_is_forced(
    pgvector_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """At 1M points and 100 tenants the filtered HNSW scan found 0.73 of the true top 10
    (benchmarks/vector_scale): a scope of at most `exact_scope_points` skips it. With the
    sort priced out (the planner would pick HNSW), the small tenant's top 10 are still the
    exact ones, from the exact scan; past the bound the HNSW path answers."""
    url = f"{pgvector_url}&options={quote('-c enable_sort=off')}"
    index = PgvectorVectorIndex(url, fresh_name(), exact_scope_points=100)
    await index.ensure_collection(DIM)
    rng = random.Random(7)  # fixed test data  # nosec B311

    def near(direction: list[float]) -> list[float]:
        return [x + rng.gauss(0, 0.3) for x in direction]

    crowd = [dense(f"crowd-{i}", near(E1), user_id="user-crowd") for i in range(1500)]
    for start in range(0, len(crowd), 500):
        await index.upsert_dense(crowd[start : start + 500])
    mine = [dense(f"mine-{i}", near([0.2, 0.5, 0.5, 0.5])) for i in range(60)]
    await index.upsert_dense(mine)
    caplog.set_level(logging.DEBUG, "ragline.adapters.vector_index.pgvector")
    hits = await index.query_dense(USER, DATASET, E1, 10)
    exact = sorted(mine, key=lambda p: (-_cosine(p.vector, E1), p.chunk_id))[:10]
    assert ids(hits) == [p.chunk_id for p in exact]
    assert [r for r in caplog.records if "exact scan of a small scope" in r.getMessage()]
    caplog.clear()
    crowded = await index.query_dense("user-crowd", DATASET, E1, 10)  # 1500 > 100: HNSW
    assert len(crowded) == 10
    assert not [r for r in caplog.records if "small scope" in r.getMessage()]
    await index.close()


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


async def test_a_layout_1_collection_gains_meta_once(pgvector_url: str) -> None:
    """A collection made before metadata filters (no `meta`, registry layout 1): the next
    process to open it adds the column, records layout 2, and its old points carry no
    labels until relabelled."""
    name = fresh_name()
    first = PgvectorVectorIndex(pgvector_url, name)
    await first.ensure_collection(DIM)
    await first.upsert_dense([dense("old", E1, doc_id="ann-2019")])
    await first.close()
    with psycopg.connect(pgvector_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {name}_points DROP COLUMN meta")
        conn.execute("UPDATE ragline_vector_collections SET layout = 1 WHERE name = %s", (name,))
    opened = [PgvectorVectorIndex(pgvector_url, name) for _ in range(3)]
    found = await asyncio.gather(
        *(index.query_dense(USER, DATASET, E1, 5, Exists("author")) for index in opened)
    )
    assert found == [[], [], []]
    with psycopg.connect(pgvector_url) as conn:
        row = conn.execute(
            "SELECT layout FROM ragline_vector_collections WHERE name = %s", (name,)
        ).fetchone()
    assert row == (2,)
    index = opened[0]
    await index.upsert_dense([labelled("new", E1, "ann-2021")])
    await index.relabel_document(USER, DATASET, "ann-2019", DocumentMetadata({"author": "Ann"}))
    hits = await index.query_dense(USER, DATASET, E1, 5, Eq("author", "Ann"))
    assert sorted(ids(hits)) == ["new", "old"]
    for each in opened:
        await each.close()


async def test_without_iterative_scan_hnsw_would_lose_the_small_tenant(pgvector_url: str) -> None:
    """The control for the kit above: the same data, the same filtered query on the HNSW
    index with `hnsw.iterative_scan = off`, finds fewer than top_k (the 40 candidates of
    ef_search are the crowd's)."""
    name = fresh_name()
    index = PgvectorVectorIndex(pgvector_url, name)
    await index.ensure_collection(DIM)
    crowd = [dense(f"c{i}", [1.0, i / 4000, 0, 0], user_id="user-crowd") for i in range(1980)]
    await index.upsert_dense(crowd)
    await index.upsert_dense([dense(f"m{i}", [0.1, 1.0, i / 20, 0]) for i in range(20)])
    await index.close()
    with psycopg.connect(pgvector_url) as conn:
        conn.execute("SET enable_sort = off")
        conn.execute("SET hnsw.iterative_scan = off")
        rows = conn.execute(
            f"SELECT chunk_id FROM {name}_points WHERE user_id = %s AND dataset_id = %s"  # nosec B608
            " ORDER BY dense <=> %s::vector LIMIT 10",
            (USER, DATASET, "[1,0,0,0]"),
        ).fetchall()
        plan = conn.execute(
            f"EXPLAIN SELECT chunk_id FROM {name}_points WHERE user_id = %s"  # nosec B608
            " ORDER BY dense <=> %s::vector LIMIT 10",
            (USER, "[1,0,0,0]"),
        ).fetchall()
    assert "hnsw" in " ".join(str(r[0]) for r in plan)
    assert len(rows) < 10


async def test_points_survive_reopening(pgvector_url: str) -> None:
    name = fresh_name()
    first = PgvectorVectorIndex(pgvector_url, name)
    await first.ensure_collection(DIM)
    await first.upsert_dense([dense("a", E1, title="kept")])
    await first.upsert_sparse([sparse("a", {9: 1.0}, title="kept")])
    await first.close()

    again = PgvectorVectorIndex(pgvector_url, name)
    with pytest.raises(EmbeddingDimensionMismatch):
        await again.ensure_collection(DIM * 2)
    [hit] = await again.query_dense(USER, DATASET, E1, 5)
    assert (hit.chunk_id, hit.payload.extra) == ("a", {"title": "kept"})
    assert ids(await again.query_sparse(USER, DATASET, sv({9: 1.0}), 5)) == ["a"]
    await again.upsert_dense([dense("b", E2)])  # the dimension is read back from the registry
    assert ids(await again.query_dense(USER, DATASET, E2, 1)) == ["b"]
    with pytest.raises(EmbeddingDimensionMismatch):
        await again.query_dense(USER, DATASET, [1.0, 0.0], 1)
    await again.close()


async def test_concurrent_ensure_collection_creates_one_layout(pgvector_url: str) -> None:
    """Workers starting at once, each having looked for the collection before (so their
    sessions remember it missing): the advisory lock serialises the DDL, and the one that
    waited sees the other's collection instead of registering it again."""
    with fresh_database(pgvector_url) as url:  # no registry table yet
        indexes = [PgvectorVectorIndex(url) for _ in range(4)]
        for index in indexes:
            assert await index.query_dense(USER, DATASET, E1, 1) == []
        await asyncio.gather(*(index.ensure_collection(DIM) for index in indexes))
        await indexes[0].upsert_dense([dense("a", E1)])
        assert ids(await indexes[3].query_dense(USER, DATASET, E1, 1)) == ["a"]
        for index in indexes:
            await index.close()


async def test_an_unreachable_server_is_unavailable(tmp_path: object) -> None:
    index = PgvectorVectorIndex("postgresql://postgres@/postgres?host=/nonexistent-socket-dir")
    with pytest.raises(VectorIndexUnavailable):
        await index.ensure_collection(DIM)
    await index.close()


async def test_a_role_that_cannot_create_the_extension_is_told_how(pgvector_url: str) -> None:
    """A database without the extension, owned by a role that may not create it (it is not
    a trusted extension): the error names the fix, not a bare SQL error."""
    role = f"app_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pgvector_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
    try:
        with fresh_database(pgvector_url, owner=role) as url:
            index = PgvectorVectorIndex(url, fresh_name())
            with pytest.raises(VectorIndexUnavailable, match="CREATE EXTENSION vector"):
                await index.ensure_collection(DIM)
            await index.close()
    finally:
        with psycopg.connect(pgvector_url, autocommit=True) as conn:
            conn.execute(f'DROP ROLE "{role}"')


async def test_sparse_scores_are_the_idf_formula(pgvector_url: str) -> None:
    """score = sum of q_t * w_t * ln((N - n_t + 0.5) / (n_t + 0.5) + 1) over shared terms,
    N and n_t counted in the scope only (another tenant's postings change nothing)."""
    index = PgvectorVectorIndex(pgvector_url, fresh_name())
    await index.ensure_collection(DIM)
    await index.upsert_sparse(
        [sparse("a", {1: 1.0, 2: 0.5}), sparse("b", {1: 2.0}), sparse("c", {3: 1.0})]
        + [sparse(f"x{i}", {2: 1.0}, user_id="user-2") for i in range(5)]
    )

    def idf(df: int, n: int = 3) -> float:
        return math.log((n - df + 0.5) / (df + 0.5) + 1)

    hits = await index.query_sparse(USER, DATASET, sv({1: 1.0, 2: 2.0}), 10)
    scores = {h.chunk_id: h.score for h in hits}
    assert scores == pytest.approx({"a": idf(2) + 2 * 0.5 * idf(1), "b": 2 * idf(2)})
    await index.close()


async def test_a_limit_past_the_ef_search_bound_still_answers(pgvector_url: str) -> None:
    """hnsw.ef_search stops at 1000; a larger limit keeps it there (the scan goes on)."""
    index = PgvectorVectorIndex(pgvector_url, fresh_name(), ef_search=40)
    await index.ensure_collection(DIM)
    await index.upsert_dense([dense("a", E1), dense("b", E2)])
    assert sorted(ids(await index.query_dense(USER, DATASET, E1, 5000))) == ["a", "b"]
    await index.close()


async def test_a_refused_statement_is_a_vector_index_error(pgvector_url: str) -> None:
    name = fresh_name()
    index = PgvectorVectorIndex(pgvector_url, name)
    await index.ensure_collection(DIM)
    with psycopg.connect(pgvector_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {name}_terms")  # an operator's mistake
    with pytest.raises(VectorIndexError, match="pgvector: UndefinedTable"):
        await index.query_sparse(USER, DATASET, sv({1: 1.0}), 5)
    await index.close()
