"""Contract kit for the VectorIndex port.

One class per capability (as Haystack's `haystack/testing/document_store.py` does):
- `VectorIndexContract`: collections, dense nearest-first search with payloads, sparse
  search by weight, upserts, deletes, tenancy. Every VectorIndex passes it.
- `IdfSparseRankingContract`: sparse scores weigh each term by its inverse document
  frequency (Qdrant's IDF modifier), so a rare term outranks a common one.
- `FilteredTopKContract`: a scoped dense query returns `limit` hits whenever the scope
  holds that many, even when the scope is 1% of the collection (an approximate index that
  filters after its candidate list would return fewer).
A real adapter combines them all; a test double leaves out a mixin it honestly lacks.

Subclass once per adapter and provide the `vector_index` fixture: a fresh adapter whose
collection does not exist yet, on a real engine. The kit closes it after each test.

    class TestMyVectorIndex(VectorIndexContract, IdfSparseRankingContract):
        @pytest.fixture
        async def vector_index(self) -> AsyncIterator[VectorIndex]:
            yield MyVectorIndex(...)

Vectors are tiny (dimension 4) so the expected neighbours are obvious by hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import AsyncIterator, Sequence

import pytest

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndex,
    VectorIndexError,
)

DIM = 4
USER, DATASET = "user-1", "dataset-1"


def payload(
    doc_id: str = "doc-1",
    user_id: str = USER,
    dataset_id: str = DATASET,
    parent_id: str | None = "parent-1",
    **extra: str,
) -> ChunkPayload:
    return ChunkPayload(
        user_id=user_id, dataset_id=dataset_id, doc_id=doc_id, parent_id=parent_id, extra=extra
    )


def dense(chunk_id: str, vector: Sequence[float], **kw: str | None) -> DensePoint:
    return DensePoint(chunk_id=chunk_id, vector=list(vector), payload=payload(**kw))  # type: ignore[arg-type]


def sparse(chunk_id: str, terms: dict[int, float], **kw: str | None) -> SparsePoint:
    return SparsePoint(chunk_id=chunk_id, sparse=sv(terms), payload=payload(**kw))  # type: ignore[arg-type]


def sv(terms: dict[int, float]) -> SparseVector:
    ordered = sorted(terms.items())
    return SparseVector(indices=[i for i, _ in ordered], values=[v for _, v in ordered])


def ids(hits: Sequence[VectorHit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


E1, E2, E3, E4 = [1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]


class VectorIndexContract:
    """The behaviour every VectorIndex must show (real adapters and test doubles alike)."""

    @pytest.fixture
    async def vector_index(self) -> AsyncIterator[VectorIndex]:
        raise NotImplementedError("subclass and yield a fresh adapter under test")
        yield  # pragma: no cover

    @pytest.fixture
    async def index(self, vector_index: VectorIndex) -> AsyncIterator[VectorIndex]:
        yield vector_index
        await vector_index.close()

    @pytest.fixture
    async def ready(self, index: VectorIndex) -> VectorIndex:
        await index.ensure_collection(DIM)
        return index

    async def test_queries_before_any_collection_find_nothing(self, index: VectorIndex) -> None:
        assert await index.query_dense(USER, DATASET, E1, 5) == []
        assert await index.query_sparse(USER, DATASET, sv({1: 1.0}), 5) == []
        await index.delete_document(USER, DATASET, "doc-1")  # no collection: still fine

    async def test_upserts_need_the_collection(self, index: VectorIndex) -> None:
        with pytest.raises(VectorIndexError):
            await index.upsert_dense([dense("a", E1)])
        with pytest.raises(VectorIndexError):
            await index.upsert_sparse([sparse("a", {1: 1.0})])
        await index.ensure_collection(DIM)
        await index.upsert_dense([dense("a", E1)])
        await index.upsert_sparse([sparse("a", {1: 1.0})])
        assert ids(await index.query_dense(USER, DATASET, E1, 10)) == ["a"]

    async def test_ensure_collection_is_idempotent_and_checks_dimension(
        self, index: VectorIndex
    ) -> None:
        await index.ensure_collection(DIM)
        await index.ensure_collection(DIM)
        with pytest.raises(EmbeddingDimensionMismatch) as caught:
            await index.ensure_collection(DIM + 1)
        assert (caught.value.expected, caught.value.actual) == (DIM, DIM + 1)

    async def test_dense_nearest_first_with_payload(self, ready: VectorIndex) -> None:
        await ready.upsert_dense(
            [
                dense("a", E1, title="alpha"),
                dense("b", [0.9, 0.1, 0, 0], doc_id="doc-2", parent_id=None),
                dense("c", E3),
            ]
        )
        hits = await ready.query_dense(USER, DATASET, [1.0, 0.05, 0, 0], 10)
        assert ids(hits) == ["a", "b", "c"]
        assert hits[0].score > hits[1].score > hits[2].score
        assert hits[0].score == pytest.approx(1 / (1 + 0.05**2) ** 0.5, abs=1e-4)
        assert hits[0].payload == payload(title="alpha")
        assert hits[1].payload == payload(doc_id="doc-2", parent_id=None)
        assert ids(await ready.query_dense(USER, DATASET, E3, 1)) == ["c"]
        assert await ready.query_dense(USER, DATASET, E3, 0) == []

    async def test_wrong_vector_length_is_a_dimension_mismatch(self, ready: VectorIndex) -> None:
        with pytest.raises(EmbeddingDimensionMismatch):
            await ready.upsert_dense([dense("a", [1.0, 0, 0])])

    async def test_sparse_more_weight_ranks_first(self, ready: VectorIndex) -> None:
        await ready.upsert_sparse(
            [sparse("low", {1: 0.2, 2: 1.0}), sparse("high", {1: 2.0, 3: 1.0})]
        )
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 10)) == ["high", "low"]

    async def test_dense_then_sparse_keeps_both(self, ready: VectorIndex) -> None:
        await ready.upsert_dense([dense("a", E1), dense("b", E2)])
        await ready.upsert_sparse([sparse("a", {5: 1.0}), sparse("b", {6: 1.0})])
        assert ids(await ready.query_dense(USER, DATASET, E1, 1)) == ["a"]
        assert ids(await ready.query_dense(USER, DATASET, E2, 1)) == ["b"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({5: 1.0}), 10)) == ["a"]

    async def test_sparse_then_dense_keeps_both(self, ready: VectorIndex) -> None:
        await ready.upsert_sparse([sparse("a", {5: 1.0})])
        await ready.upsert_dense([dense("a", E1), dense("fresh", E2)])
        assert ids(await ready.query_sparse(USER, DATASET, sv({5: 1.0}), 10)) == ["a"]
        assert ids(await ready.query_dense(USER, DATASET, E1, 1)) == ["a"]

    async def test_re_upsert_replaces_without_duplicates(self, ready: VectorIndex) -> None:
        await ready.upsert_dense([dense("a", E1, title="v1"), dense("b", E2)])
        await ready.upsert_dense([dense("a", E1, title="v1"), dense("b", E2)])
        await ready.upsert_dense([dense("a", E3, title="v2")])
        hits = await ready.query_dense(USER, DATASET, E3, 10)
        assert sorted(ids(hits)) == ["a", "b"]
        assert ids(hits)[0] == "a"
        assert hits[0].payload.extra == {"title": "v2"}  # the latest write's payload wins
        await ready.upsert_sparse([sparse("a", {1: 1.0})])
        await ready.upsert_sparse([sparse("a", {2: 1.0})])
        assert await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 10) == []
        assert ids(await ready.query_sparse(USER, DATASET, sv({2: 1.0}), 10)) == ["a"]

    async def test_delete_document_removes_only_that_document(self, ready: VectorIndex) -> None:
        await ready.upsert_dense(
            [
                dense("a1", E1, doc_id="doc-a"),
                dense("a2", E2, doc_id="doc-a"),
                dense("b1", E1, doc_id="doc-b"),
                dense("other-tenant", E1, doc_id="doc-a", user_id="user-2"),
                dense("other-dataset", E1, doc_id="doc-a", dataset_id="dataset-2"),
            ]
        )
        await ready.upsert_sparse([sparse("a1", {1: 1.0}, doc_id="doc-a")])
        await ready.delete_document(USER, DATASET, "doc-a")
        assert ids(await ready.query_dense(USER, DATASET, E1, 10)) == ["b1"]
        assert await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 10) == []
        assert ids(await ready.query_dense("user-2", DATASET, E1, 10)) == ["other-tenant"]
        assert ids(await ready.query_dense(USER, "dataset-2", E1, 10)) == ["other-dataset"]
        await ready.delete_document(USER, DATASET, "doc-a")  # again: nothing left, no error

    async def test_tenants_never_see_each_other(self, ready: VectorIndex) -> None:
        scopes = [(USER, DATASET), ("user-2", DATASET), (USER, "dataset-2")]
        for user_id, dataset_id in scopes:
            # the same chunk_id in every scope: separate points, not overwrites
            await ready.upsert_dense(
                [dense("same", E1, user_id=user_id, dataset_id=dataset_id, owner=user_id)]
            )
            await ready.upsert_sparse(
                [sparse("same", {3: 1.0}, user_id=user_id, dataset_id=dataset_id, owner=user_id)]
            )
        for user_id, dataset_id in scopes:
            [hit] = await ready.query_dense(user_id, dataset_id, E1, 10)
            assert (hit.payload.user_id, hit.payload.dataset_id) == (user_id, dataset_id)
            assert hit.payload.extra == {"owner": user_id}
            [hit] = await ready.query_sparse(user_id, dataset_id, sv({3: 1.0}), 10)
            assert hit.payload.extra == {"owner": user_id}
        assert await ready.query_dense("nobody", DATASET, E1, 10) == []

    async def test_many_points_in_one_call(self, ready: VectorIndex) -> None:
        points = [dense(f"c{i}", [1.0, i / 600, 0, 0]) for i in range(600)]
        await ready.upsert_dense(points)
        await ready.upsert_sparse([sparse(f"c{i}", {i: 1.0}) for i in range(600)])
        hits = await ready.query_dense(USER, DATASET, E1, 600)
        assert len(hits) == 600
        assert ids(hits)[:3] == ["c0", "c1", "c2"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({599: 1.0}), 5)) == ["c599"]


class IdfSparseRankingContract:
    """Capability: sparse scores weigh every query term by its inverse document frequency
    in the scope, so equal raw weights rank a rare term above a common one. Needs the
    `ready` fixture of `VectorIndexContract`."""

    async def test_sparse_ranking_uses_idf(self, ready: VectorIndex) -> None:
        common, rare = 7, 4242
        await ready.upsert_sparse(
            [
                sparse("has-common-1", {common: 1.0}),
                sparse("has-common-2", {common: 1.0}),
                sparse("has-common-3", {common: 1.0}),
                sparse("has-rare", {rare: 1.0}),
                sparse("unrelated", {99: 1.0}),
            ]
        )
        hits = await ready.query_sparse(USER, DATASET, sv({common: 1.0, rare: 1.0}), 10)
        assert ids(hits)[0] == "has-rare"  # equal raw weights: only IDF separates them
        assert sorted(ids(hits)[1:]) == ["has-common-1", "has-common-2", "has-common-3"]
        assert hits[0].score > hits[1].score > 0
        assert await ready.query_sparse(USER, DATASET, sv({}), 10) == []


class FilteredTopKContract:
    """Capability: a dense query scoped to a tenant that holds 1% of the points returns
    `limit` hits, its nearest ones, even when the query lies among the other tenants'
    points (so an index's first candidates are all someone else's). Needs `ready`."""

    SMALL, CROWD, LIMIT = 20, 1980, 10

    async def test_a_small_tenant_still_gets_top_k(self, ready: VectorIndex) -> None:
        rng = random.Random(20)  # fixed: the same points on every adapter
        crowd_dir = [1.0, 0.0, 0.0, 0.0]

        def near(direction: list[float], spread: float) -> list[float]:
            return [x + rng.gauss(0, spread) for x in direction]

        crowd = [  # half another user's, half this user's other dataset: both filters count
            dense(f"crowd-{i}", near(crowd_dir, 0.05),
                  **({"user_id": "user-crowd"} if i % 2 else {"dataset_id": "dataset-crowd"}))
            for i in range(self.CROWD)
        ]  # fmt: skip
        mine = [dense(f"mine-{i}", near([0.0, 0.5, 0.5, 0.5], 0.4)) for i in range(self.SMALL)]
        for start in range(0, len(crowd), 500):
            await ready.upsert_dense(crowd[start : start + 500])
        await ready.upsert_dense(mine)

        hits = await ready.query_dense(USER, DATASET, crowd_dir, self.LIMIT)
        assert len(hits) == self.LIMIT
        assert all(h.chunk_id.startswith("mine-") for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        exact = sorted(mine, key=lambda p: -_cosine(p.vector, crowd_dir))[: self.LIMIT]
        assert len(set(ids(hits)) & {p.chunk_id for p in exact}) >= self.LIMIT - 1
        assert len(await ready.query_dense(USER, DATASET, crowd_dir, 50)) == self.SMALL


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))
