"""EmbeddedVectorIndex through the VectorIndex kit, plus what is specific to one SQLite file:
sharing a path between instances and processes (generation-checked caches), persistence,
big batches, the IDF formula itself and the error mapping."""

from __future__ import annotations

import asyncio
import math
import random
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.vector_index import (
    VectorIndex,
    VectorIndexError,
    VectorIndexUnavailable,
    VectorSpace,
)
from ragline.domain.metadata import DocumentMetadata, Eq
from ragline.testing.kits.vector_index import (
    DATASET,
    DIM,
    E1,
    E2,
    E3,
    USER,
    FilteredTopKContract,
    IdfSparseRankingContract,
    MetadataFilterContract,
    VectorIndexContract,
    VectorSpacesContract,
    dense,
    ids,
    payload,
    sparse,
    sv,
)


class TestEmbeddedVectorIndex(
    VectorIndexContract,
    IdfSparseRankingContract,
    FilteredTopKContract,
    MetadataFilterContract,
    VectorSpacesContract,
):
    @pytest.fixture
    async def vector_index(self, tmp_path: Path) -> AsyncIterator[VectorIndex]:
        yield EmbeddedVectorIndex(tmp_path / "vectors")


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[EmbeddedVectorIndex, EmbeddedVectorIndex]]:
    first, second = EmbeddedVectorIndex(tmp_path / "v"), EmbeddedVectorIndex(tmp_path / "v")
    await first.ensure_collection(DIM)
    yield first, second
    await first.close()
    await second.close()


async def test_instances_on_one_path_see_each_others_writes(
    pair: tuple[EmbeddedVectorIndex, EmbeddedVectorIndex],
) -> None:
    writer, reader = pair
    await writer.upsert_dense([dense("a", E1)])
    await writer.upsert_sparse([sparse("a", {1: 1.0})])
    assert ids(await reader.query_dense(USER, DATASET, E1, 5)) == ["a"]  # reader caches now
    assert ids(await reader.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == ["a"]

    await writer.upsert_dense([dense("b", E2)])
    await writer.upsert_sparse([sparse("b", {1: 3.0})])
    assert sorted(ids(await reader.query_dense(USER, DATASET, E1, 5))) == ["a", "b"]
    assert ids(await reader.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == ["b", "a"]

    await writer.delete_document(USER, DATASET, "doc-1")
    assert await reader.query_dense(USER, DATASET, E1, 5) == []
    assert await reader.query_sparse(USER, DATASET, sv({1: 1.0}), 5) == []


async def test_a_write_only_reloads_the_vectors_it_changed(
    pair: tuple[EmbeddedVectorIndex, EmbeddedVectorIndex],
) -> None:
    """A sparse write bumps only the sparse generation: the reader's dense matrix stays valid
    (same object), while its payloads (read per query) still show the latest write."""
    writer, reader = pair
    await writer.upsert_dense([dense("a", E1, title="v1")])
    await reader.query_dense(USER, DATASET, E1, 5)
    cached = reader._cache.get(("dense", 1), 1)
    assert cached is not None
    await writer.upsert_sparse([sparse("a", {1: 1.0}, title="v2")])
    [hit] = await reader.query_dense(USER, DATASET, E1, 5)
    assert hit.payload.extra == {"title": "v2"}
    assert reader._cache.get(("dense", 1), 1) is cached


async def test_a_base_sweep_another_instance_sees_keeps_its_sparse_arrays(
    pair: tuple[EmbeddedVectorIndex, EmbeddedVectorIndex],
) -> None:
    """The generation-0 sweep clears the user's dense vectors and bumps only the dense
    generation: a reader that cached both sees no dense hit (a filtered query neither), keeps
    its sparse arrays (same object), and a point without a dense vector is outside the dense
    matrix, `largest_scope` and the next dense write's way."""
    writer, reader = pair
    labels = DocumentMetadata({"author": "Ann"})
    await writer.upsert_dense(
        [attrs.evolve(dense(f"c{i}", E1), payload=attrs.evolve(payload(), metadata=labels))
         for i in range(3)]
    )  # fmt: skip
    await writer.upsert_sparse([sparse(f"c{i}", {1: 1.0}) for i in range(3)])
    assert len(await reader.query_dense(USER, DATASET, E1, 5)) == 3
    assert len(await reader.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == 3
    [key] = [key for key in reader._cache._entries if key[0] == "sparse"]
    generation, cached = reader._cache._entries[key]

    await writer.delete_user(VectorSpace(0, DIM), USER)
    assert await reader.query_dense(USER, DATASET, E1, 5) == []
    assert await reader.query_dense(USER, DATASET, E1, 5, Eq("author", "Ann")) == []
    assert len(await reader.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == 3
    assert reader._cache.get(key, generation) is cached
    assert await reader.largest_scope() == 0
    await writer.upsert_dense([dense("c1", E2)])
    assert ids(await reader.query_dense(USER, DATASET, E2, 5)) == ["c1"]
    assert await reader.largest_scope() == 1


async def test_concurrent_writers_on_one_path_lose_nothing(
    pair: tuple[EmbeddedVectorIndex, EmbeddedVectorIndex],
) -> None:
    """Both instances write at once from worker threads: SQLite serialises the transactions
    (BEGIN IMMEDIATE + busy timeout) and every point lands, dense and sparse."""
    first, second = pair
    writes = []
    for n in range(20):
        index = first if n % 2 else second
        writes.append(index.upsert_dense([dense(f"c{n}-{i}", E1) for i in range(50)]))
        writes.append(index.upsert_sparse([sparse(f"c{n}-{i}", {n: 1.0}) for i in range(50)]))
    await asyncio.gather(*writes)
    assert len(await first.query_dense(USER, DATASET, E1, 5000)) == 1000
    for n in (0, 19):
        assert len(await second.query_sparse(USER, DATASET, sv({n: 1.0}), 5000)) == 50


async def test_a_write_from_another_process_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "v"
    index = EmbeddedVectorIndex(path)
    await index.ensure_collection(DIM)
    await index.upsert_dense([dense("mine", E1)])
    assert ids(await index.query_dense(USER, DATASET, E1, 5)) == ["mine"]
    script = (
        "import asyncio, sys\n"
        "from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex\n"
        "from ragline.testing.kits.vector_index import dense, sparse\n"
        "async def main():\n"
        "    other = EmbeddedVectorIndex(sys.argv[1])\n"
        "    await other.ensure_collection(4)\n"
        "    await other.upsert_dense([dense('theirs', [0.9, 0.1, 0, 0])])\n"
        "    await other.upsert_sparse([sparse('theirs', {8: 1.0})])\n"
        "    await other.close()\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=120)
    assert ids(await index.query_dense(USER, DATASET, E1, 5)) == ["mine", "theirs"]
    assert ids(await index.query_sparse(USER, DATASET, sv({8: 1.0}), 5)) == ["theirs"]
    await index.close()


async def test_data_survives_reopening(tmp_path: Path) -> None:
    first = EmbeddedVectorIndex(tmp_path / "v")
    await first.ensure_collection(DIM)
    await first.upsert_dense([dense("a", E1, title="kept")])
    await first.upsert_sparse([sparse("a", {9: 1.0}, title="kept")])
    await first.close()

    again = EmbeddedVectorIndex(tmp_path / "v")
    with pytest.raises(EmbeddingDimensionMismatch):
        await again.ensure_collection(DIM * 2)
    [hit] = await again.query_dense(USER, DATASET, E1, 5)
    assert (hit.chunk_id, hit.payload.extra) == ("a", {"title": "kept"})
    assert ids(await again.query_sparse(USER, DATASET, sv({9: 1.0}), 5)) == ["a"]
    await again.upsert_dense([dense("b", E2)])  # dimension read back from the file
    assert ids(await again.query_dense(USER, DATASET, E2, 1)) == ["b"]
    with pytest.raises(EmbeddingDimensionMismatch):
        await again.query_dense(USER, DATASET, [1.0, 0.0], 1)
    await again.close()
    assert [p.name for p in (tmp_path / "v").iterdir() if p.suffix == ".sqlite3"] == [
        "vectors.sqlite3"
    ]


async def test_a_big_batch_in_one_call(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v")
    await index.ensure_collection(DIM)
    count = 20_000
    await index.upsert_dense([dense(f"c{i}", [1.0, i / count, 0, 0]) for i in range(count)])
    await index.upsert_sparse(
        [sparse(f"c{i}", {i % 100: 1.0, 1000 + i: 2.0}) for i in range(count)]
    )
    hits = await index.query_dense(USER, DATASET, E2, 3)  # score rises with i
    assert ids(hits) == ["c19999", "c19998", "c19997"]
    assert ids(await index.query_sparse(USER, DATASET, sv({1000 + 12_345: 1.0}), 5)) == ["c12345"]
    assert len(await index.query_sparse(USER, DATASET, sv({7: 1.0}), 1000)) == count // 100
    await index.close()


async def test_sparse_scores_follow_qdrant_idf(tmp_path: Path) -> None:
    """score = sum_t q_t * v_t * ln((N - n_t + 0.5) / (n_t + 0.5) + 1), N = points of the
    scope with a sparse vector (a dense-only point or another scope does not count)."""
    index = EmbeddedVectorIndex(tmp_path / "v")
    await index.ensure_collection(DIM)
    await index.upsert_sparse(
        [
            sparse("x", {1: 2.0, 2: 0.5}),
            sparse("y", {1: 1.0}),
            sparse("z", {3: 1.0}),
            sparse("empty", {}),  # counts in N, never a hit
            sparse("elsewhere", {1: 1.0, 2: 1.0}, dataset_id="dataset-2"),
        ]
    )
    await index.upsert_dense([dense("dense-only", E3)])

    def idf(n_t: int, n: int = 4) -> float:
        return math.log((n - n_t + 0.5) / (n_t + 0.5) + 1)

    hits = await index.query_sparse(USER, DATASET, sv({1: 1.5, 2: 1.0, 77: 1.0}), 10)
    assert ids(hits) == ["x", "y"]
    assert hits[0].score == pytest.approx(1.5 * 2.0 * idf(2) + 1.0 * 0.5 * idf(1), rel=1e-6)
    assert hits[1].score == pytest.approx(1.5 * 1.0 * idf(2), rel=1e-6)
    await index.close()


async def test_delete_document_keeps_other_documents_sparse_and_dense(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v")
    await index.ensure_collection(DIM)
    await index.upsert_dense([dense("a", E1, doc_id="doc-a"), dense("b", E1, doc_id="doc-b")])
    await index.upsert_sparse(
        [sparse("a", {1: 1.0}, doc_id="doc-a"), sparse("b", {1: 1.0}, doc_id="doc-b")]
    )
    await index.query_sparse(USER, DATASET, sv({1: 1.0}), 5)  # cache both, then delete
    await index.query_dense(USER, DATASET, E1, 5)
    await index.delete_document(USER, DATASET, "doc-a")
    assert ids(await index.query_dense(USER, DATASET, E1, 5)) == ["b"]
    [hit] = await index.query_sparse(USER, DATASET, sv({1: 1.0}), 5)
    assert hit.chunk_id == "b"
    assert hit.score == pytest.approx(math.log((1 - 1 + 0.5) / (1 + 0.5) + 1))  # N is now 1
    await index.close()


async def test_writes_need_the_collection(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v")
    with pytest.raises(VectorIndexError, match="ensure_collection"):
        await index.upsert_dense([dense("a", E1)])
    with pytest.raises(VectorIndexError, match="ensure_collection"):
        await index.upsert_sparse([sparse("a", {1: 1.0})])
    await index.close()


async def test_closed_index_refuses_calls(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v")
    await index.ensure_collection(DIM)
    await index.close()
    await index.close()  # idempotent
    with pytest.raises(VectorIndexError, match="closed"):
        await index.query_dense(USER, DATASET, E1, 1)


async def test_an_unopenable_path_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    index = EmbeddedVectorIndex(blocker)
    with pytest.raises(VectorIndexUnavailable):
        await index.ensure_collection(DIM)
    await index.close()


async def test_a_locked_file_is_unavailable_after_the_busy_timeout(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v", busy_timeout_ms=100)
    await index.ensure_collection(DIM)
    holder = sqlite3.connect(tmp_path / "v" / "vectors.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        with pytest.raises(VectorIndexUnavailable, match="locked"):
            await index.upsert_dense([dense("a", E1)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    await index.upsert_dense([dense("a", E1)])  # the pool recovered
    assert ids(await index.query_dense(USER, DATASET, E1, 1)) == ["a"]
    await index.close()


async def test_a_write_waits_for_the_lock_without_blocking_the_loop(tmp_path: Path) -> None:
    """Small writes try on the event loop's thread first; when the write lock is held they
    wait in a worker thread, so the holder (here a coroutine) can finish and release it."""
    index = EmbeddedVectorIndex(tmp_path / "v", busy_timeout_ms=5000)
    await index.ensure_collection(DIM)
    await index.upsert_dense([dense("a", E1)])  # a pooled connection is now idle
    holder = sqlite3.connect(tmp_path / "v" / "vectors.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    released = False

    async def release() -> None:
        nonlocal released
        await asyncio.sleep(0.05)
        holder.execute("ROLLBACK")
        released = True

    try:
        await asyncio.gather(
            index.upsert_dense([dense("b", E2)]),
            index.upsert_sparse([sparse("b", {1: 1.0})]),
            release(),
        )
    finally:
        holder.close()
    assert released
    assert sorted(ids(await index.query_dense(USER, DATASET, E1, 5))) == ["a", "b"]
    await index.delete_document(USER, DATASET, "no-such-document")  # nothing to delete
    assert len(await index.query_dense(USER, DATASET, E1, 5)) == 2
    await index.close()


async def test_a_file_of_another_format_is_unavailable(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path / "v")
    await index.ensure_collection(DIM)
    await index.close()
    with sqlite3.connect(tmp_path / "v" / "vectors.sqlite3") as probe:
        probe.execute("UPDATE meta SET value = '999' WHERE key = 'format'")
    probe.close()
    again = EmbeddedVectorIndex(tmp_path / "v")
    with pytest.raises(VectorIndexUnavailable, match="format"):
        await again.query_dense(USER, DATASET, E1, 1)
    await again.close()


async def test_scores_agree_with_qdrant_local(tmp_path: Path) -> None:
    """The adapter it replaces, on the same random points: the same hits in the same order,
    the same cosine and IDF-weighted sparse scores (Qdrant computes in float32)."""
    from ragline.adapters.vector_index.qdrant import QdrantVectorIndex

    rng = random.Random(5)
    ours, theirs = EmbeddedVectorIndex(tmp_path / "v"), QdrantVectorIndex(location=":memory:")
    for index in (ours, theirs):
        await index.ensure_collection(8)
    dense_points = [dense(f"c{i}", [rng.uniform(-1, 1) for _ in range(8)]) for i in range(300)]
    sparse_points = [
        sparse(f"c{i}", {rng.randrange(40): rng.uniform(0.1, 2) for _ in range(6)})
        for i in range(250)  # 50 dense-only points: outside the sparse N
    ]
    for index in (ours, theirs):
        await index.upsert_dense(dense_points)
        await index.upsert_sparse(sparse_points)
    for _ in range(5):
        query = [rng.uniform(-1, 1) for _ in range(8)]
        want = await theirs.query_dense(USER, DATASET, query, 10)
        got = await ours.query_dense(USER, DATASET, query, 10)
        assert ids(got) == ids(want)
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)
        terms = {rng.randrange(45): rng.uniform(0.5, 1.5) for _ in range(3)}
        want = await theirs.query_sparse(USER, DATASET, sv(terms), 300)
        got = await ours.query_sparse(USER, DATASET, sv(terms), 300)
        assert len(got) == len(want) > 10
        assert ids(got)[:10] == ids(want)[:10]
        assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5)
    await ours.close()
    await theirs.close()
