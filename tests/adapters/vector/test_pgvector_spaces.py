"""PgvectorVectorIndex's embedding generations (issue 21) beyond the kit's
`VectorSpacesContract` (run in test_pgvector.py): a shadow space is a registered collection
of its own that another process finds, a long collection name still gives a valid space
name, closing the base index closes its spaces, and a user's sweep is a fixed number of
set-based statements however many points the user has."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from sqlalchemy import event

from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex
from ragline.adapters.vector_index.pgvector.schema import MAX_NAME, space_name
from ragline.application.ports.vector_index import VectorIndexError, VectorSpace
from ragline.testing.kits.vector_index import DATASET, DIM, E1, USER, dense, ids, sparse, sv


def fresh_name() -> str:
    return f"kit_{uuid.uuid4().hex[:12]}"


@contextmanager
def statements(index: PgvectorVectorIndex) -> Iterator[list[str]]:
    """The SQL statements the index's engine sends while the block runs (an executemany
    counts once)."""
    sent: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        sent.append(" ".join(statement.split()))

    engine = index._engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_space_name_stays_a_valid_distinct_name() -> None:
    assert space_name("ragline_chunks", 1, 384) == "ragline_chunks_g1_d384"
    long = "c" * MAX_NAME
    names = {space_name(long, generation, 1024) for generation in range(1, 50)}
    assert len(names) == 49
    assert all(len(n) <= MAX_NAME and n.endswith("_d1024") for n in names)
    assert space_name(long, 7, 1024) == space_name(long, 7, 1024)
    assert space_name(long, 7, 1024) != space_name("c" * (MAX_NAME - 1), 7, 1024)


async def test_a_shadow_space_is_a_registered_collection_another_process_finds(
    pgvector_url: str,
) -> None:
    name = "s" + fresh_name() + "x" * 30  # 47 characters: the space's name is hashed
    base = PgvectorVectorIndex(pgvector_url, name)
    await base.ensure_collection(DIM)
    shadow = await base.in_space(VectorSpace(1, 3))
    await shadow.upsert_dense([dense("a", [1.0, 0, 0])])
    with psycopg.connect(pgvector_url) as conn:
        registered = conn.execute(
            "SELECT name, dimension FROM ragline_vector_collections WHERE name IN (%s, %s)"
            " ORDER BY dimension",
            (name, space_name(name, 1, 3)),
        ).fetchall()
    assert registered == [(space_name(name, 1, 3), 3), (name, DIM)]

    other = PgvectorVectorIndex(pgvector_url, name)  # another worker, same collection
    seen = await other.in_space(VectorSpace(1, 3))
    assert ids(await seen.query_dense(USER, DATASET, [1.0, 0, 0], 5)) == ["a"]
    await other.close()
    assert ids(await shadow.query_dense(USER, DATASET, [1.0, 0, 0], 5)) == ["a"]  # own engine

    await base.close()
    with pytest.raises(VectorIndexError, match="closed"):
        await shadow.query_dense(USER, DATASET, [1.0, 0, 0], 5)


async def test_a_known_space_costs_no_statement(pgvector_url: str) -> None:
    """Search asks for the user's active space on every query: once a space's collection
    is known, `in_space` sends nothing (no DDL lock, no registry read)."""
    index = PgvectorVectorIndex(pgvector_url, fresh_name())
    await index.ensure_collection(DIM)
    shadow = await index.in_space(VectorSpace(1, 3))
    with statements(index) as sent:
        assert await index.in_space(VectorSpace(0, DIM)) is index
        assert await index.in_space(VectorSpace(1, 3)) is shadow
    assert sent == []
    await index.close()


async def test_a_sweep_is_set_based_whatever_the_users_points(pgvector_url: str) -> None:
    """600 points over 3 datasets: the base sweep is one DELETE and one UPDATE, the shadow
    sweep one DELETE; what stays is what the rule keeps (rows with a sparse vector, no
    dense vector left for the user)."""
    name = fresh_name()
    index = PgvectorVectorIndex(pgvector_url, name)
    await index.ensure_collection(DIM)
    shadow = await index.in_space(VectorSpace(2, DIM))
    points = [dense(f"c{i}", E1, dataset_id=f"ds-{i % 3}") for i in range(600)]
    for target in (index, shadow):
        await target.upsert_dense(points)
    await index.upsert_sparse(
        [sparse(f"c{i}", {1: 1.0}, dataset_id=f"ds-{i % 3}") for i in range(0, 600, 2)]
    )

    def writes(sent: list[str]) -> list[str]:
        return [s.split(" WHERE ")[0] for s in sent if s.startswith(("DELETE", "UPDATE"))]

    with statements(index) as sent:
        await index.delete_user(VectorSpace(0, DIM), USER)
    assert writes(sent) == [
        f"DELETE FROM {name}_points",
        f"UPDATE {name}_points SET dense=%(dense)s",
    ]
    with statements(index) as sent:
        await index.delete_user(VectorSpace(2, DIM), USER)
    assert writes(sent) == [f"DELETE FROM {space_name(name, 2, DIM)}_points"]

    with psycopg.connect(pgvector_url) as conn:
        left = conn.execute(
            f"SELECT count(*), count(dense), bool_and(has_sparse) FROM {name}_points"  # nosec B608
        ).fetchone()
        shadow_left = conn.execute(
            f"SELECT count(*) FROM {space_name(name, 2, DIM)}_points"  # nosec B608
        ).fetchone()
    assert left == (300, 0, True)
    assert shadow_left == (0,)
    assert len(await index.query_sparse(USER, "ds-0", sv({1: 1.0}), 600)) == 100
    await index.close()
