"""PgvectorVectorIndex through the whole VectorIndex kit on a real PostgreSQL 16+ with
pgvector 0.8 (the session's `pgvector_url` server), plus what is specific to it: the HNSW
path itself keeps a small tenant's top_k (and without the iterative scan it would not),
the layout survives reopening, concurrent ensure_collection, the extension error."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import quote

import psycopg
import pytest

from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.vector_index import VectorIndex, VectorIndexUnavailable
from ragline.testing.kits.vector_index import (
    DATASET,
    DIM,
    E1,
    E2,
    USER,
    FilteredTopKContract,
    IdfSparseRankingContract,
    VectorIndexContract,
    dense,
    ids,
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


class TestPgvectorVectorIndex(VectorIndexContract, IdfSparseRankingContract, FilteredTopKContract):
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
        index = PgvectorVectorIndex(url, fresh_name())
        await index.ensure_collection(DIM)
        caplog.set_level(logging.DEBUG, "ragline.adapters.vector_index.pgvector")
        yield index
        await index.close()
        rescans = [r for r in caplog.get_records("call") if "exact rescan" in r.getMessage()]
        assert len(rescans) == 1  # only the query for more hits than the scope holds


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
