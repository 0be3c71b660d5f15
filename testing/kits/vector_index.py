"""Contract kit for the VectorIndex port.

One class per capability (as Haystack's `haystack/testing/document_store.py` does):
- `VectorIndexContract`: collections, dense nearest-first search with payloads, sparse
  search by weight, upserts, deletes, tenancy. Every VectorIndex passes it.
- `IdfSparseRankingContract`: sparse scores weigh each term by its inverse document
  frequency (Qdrant's IDF modifier), so a rare term outranks a common one.
- `FilteredTopKContract`: a scoped dense query returns `limit` hits whenever the scope
  holds that many, even when the scope is 1% of the collection (an approximate index that
  filters after its candidate list would return fewer).
- `MetadataFilterContract`: a query's metadata filter is applied inside the engine (every
  operator of `ragline.domain.metadata`, a filtered query still fills its limit when enough
  points match, relabelling a document, never across tenants).
- `VectorSpacesContract`: embedding generations (issue 21, the `VectorSpaces` capability):
  each (generation, dimension) space is a VectorIndex apart, generation 0 is the index
  itself, two dimensions live side by side, `delete_user` empties one tenant of one space,
  and in generation 0 (which keeps every generation's sparse vectors) only of its dense ones.
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
from typing import cast

import attrs
import pytest

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    ScopeSizes,
    SparsePoint,
    VectorHit,
    VectorIndex,
    VectorIndexError,
    VectorSpace,
    VectorSpaces,
)
from ragline.domain.metadata import DocumentMetadata, Eq, Exists
from ragline.testing.kits.metadata_cases import CASES, LABELS

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

    async def test_delete_chunks_removes_only_those_points(self, ready: VectorIndex) -> None:
        await ready.upsert_dense(
            [
                dense("a1", E1),
                dense("a2", E1),
                dense("a1", E1, user_id="user-2"),  # the same id in another scope stays
            ]
        )
        await ready.upsert_sparse([sparse("a1", {1: 1.0}), sparse("a2", {1: 1.0})])
        await ready.delete_chunks(USER, DATASET, ["a1", "never-written"])
        assert ids(await ready.query_dense(USER, DATASET, E1, 10)) == ["a2"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 10)) == ["a2"]
        assert ids(await ready.query_dense("user-2", DATASET, E1, 10)) == ["a1"]
        await ready.delete_chunks(USER, DATASET, ["a1"])  # again: no error
        await ready.delete_chunks("nobody", DATASET, ["a1"])  # a scope never written

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
        rng = random.Random(20)  # fixed test data, same on every adapter  # nosec B311
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


def labelled(chunk_id: str, vector: Sequence[float], doc_id: str, **kw: str) -> DensePoint:
    base = payload(doc_id=doc_id, **kw)
    return DensePoint(chunk_id, list(vector), attrs.evolve(base, metadata=LABELS[doc_id]))


class MetadataFilterContract:
    """Capability: `where` is applied while the engine ranks (not after), relabelling
    replaces a document's metadata. Needs the `ready` fixture of `VectorIndexContract`."""

    async def _corpus(self, index: VectorIndex) -> None:
        dense_points, sparse_points = [], []
        for n, doc_id in enumerate(LABELS):
            for k in range(2):
                point = labelled(f"{doc_id}#{k}", [1.0, n / 10, k / 10, 0], doc_id)
                dense_points.append(point)
                sparse_points.append(
                    SparsePoint(point.chunk_id, sv({1: 1.0 + n + k}), point.payload)
                )
        await index.upsert_dense(dense_points)
        await index.upsert_sparse(sparse_points)

    @pytest.mark.parametrize(("name", "where", "kept"), CASES, ids=[c[0] for c in CASES])
    async def test_every_operator_inside_both_queries(
        self, ready: VectorIndex, name: str, where: object, kept: set[str]
    ) -> None:
        await self._corpus(ready)
        for hits in (
            await ready.query_dense(USER, DATASET, E1, 50, where),  # type: ignore[arg-type]
            await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 50, where),  # type: ignore[arg-type]
        ):
            assert {h.payload.doc_id for h in hits} == kept, name
            assert len(hits) == 2 * len(kept)

    async def test_a_rare_match_still_fills_the_limit(self, ready: VectorIndex) -> None:
        """300 points, 12 of them Ann's and all far from the query: top 10 are all hers."""
        ann = DocumentMetadata({"author": "Ann"})
        points = [
            DensePoint(
                f"c{i:03}",
                [1.0, 0, 0, 0] if i % 25 else [0, 0, 1.0, 0.1],
                attrs.evolve(
                    payload(doc_id=f"d{i}"), metadata=DocumentMetadata() if i % 25 else ann
                ),
            )
            for i in range(300)
        ]
        await ready.upsert_dense(points)
        await ready.upsert_sparse(
            [
                SparsePoint(
                    p.chunk_id, sv({1: 1.0, 2: 0.1 if p.payload.metadata else 1.0}), p.payload
                )
                for p in points
            ]
        )
        only_ann = Eq("author", "Ann")
        dense_hits = await ready.query_dense(USER, DATASET, E1, 10, only_ann)
        sparse_hits = await ready.query_sparse(USER, DATASET, sv({1: 1.0, 2: 1.0}), 10, only_ann)
        for hits in (dense_hits, sparse_hits):
            assert len(hits) == 10
            assert all(int(h.chunk_id[1:]) % 25 == 0 for h in hits)
        assert len(await ready.query_dense(USER, DATASET, E1, 50, only_ann)) == 12

    async def test_relabel_replaces_a_documents_metadata(self, ready: VectorIndex) -> None:
        await self._corpus(ready)
        relabelled = DocumentMetadata({"author": "Dee"})
        await ready.relabel_document(USER, DATASET, "ann-2019", relabelled)
        ann = await ready.query_dense(USER, DATASET, E1, 50, Eq("author", "Ann"))
        assert {h.payload.doc_id for h in ann} == {"ann-2021"}
        dee = await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 50, Eq("author", "Dee"))
        assert sorted(ids(dee)) == ["ann-2019#0", "ann-2019#1"]
        gone = await ready.query_dense(USER, DATASET, E1, 50, Exists("published"))
        assert {h.payload.doc_id for h in gone} == {"bob-2020"}  # old keys are dropped
        await ready.relabel_document(USER, DATASET, "no-such-doc", relabelled)  # no-op
        await ready.relabel_document("user-2", DATASET, "ann-2021", relabelled)  # other scope
        ann = await ready.query_dense(USER, DATASET, E1, 50, Eq("author", "Ann"))
        assert {h.payload.doc_id for h in ann} == {"ann-2021"}

    async def test_a_filter_never_reaches_another_tenant(self, ready: VectorIndex) -> None:
        await self._corpus(ready)
        await ready.upsert_dense(
            [
                labelled("theirs", E1, "ann-2019", user_id="user-2"),
                labelled("other-ds", E1, "ann-2019", dataset_id="dataset-2"),
            ]
        )
        await ready.relabel_document(
            "user-2", DATASET, "ann-2019", DocumentMetadata({"author": "Ann"})
        )
        for where in (Exists("author"), Eq("author", "Ann")):
            hits = await ready.query_dense(USER, DATASET, E1, 50, where)
            assert {(h.payload.user_id, h.payload.dataset_id) for h in hits} == {(USER, DATASET)}
            assert "theirs" not in ids(hits) and "other-ds" not in ids(hits)
        assert ids(await ready.query_dense("user-2", DATASET, E1, 50, Exists("author"))) == [
            "theirs"
        ]


class VectorSpacesContract:
    """Generations: a VectorIndex that also is `VectorSpaces`; mixed into its kit class."""

    @staticmethod
    async def spaces(index: VectorIndex) -> VectorSpaces:
        assert hasattr(index, "in_space") and hasattr(index, "delete_user"), "no VectorSpaces"
        return cast("VectorSpaces", index)

    async def test_generation_zero_is_the_index_itself(self, ready: VectorIndex) -> None:
        await ready.upsert_dense([dense("a", E1)])
        zero = await (await self.spaces(ready)).in_space(VectorSpace(0, DIM))
        assert ids(await zero.query_dense(USER, DATASET, E1, 5)) == ["a"]
        with pytest.raises(EmbeddingDimensionMismatch):
            await (await self.spaces(ready)).in_space(VectorSpace(0, DIM + 1))

    async def test_spaces_stand_apart_at_any_dimension(self, ready: VectorIndex) -> None:
        spaces = await self.spaces(ready)
        await ready.upsert_dense([dense("old", E1)])
        wide = await spaces.in_space(VectorSpace(1, 3))
        same = await spaces.in_space(VectorSpace(2, DIM))
        assert await spaces.in_space(VectorSpace(1, 3)) is wide  # one index per space
        await wide.upsert_dense([dense("new", [1.0, 0, 0])])
        await same.upsert_dense([dense("same-dim", E1)])
        await wide.upsert_sparse([sparse("new", {7: 1.0})])
        assert ids(await ready.query_dense(USER, DATASET, E1, 5)) == ["old"]
        assert ids(await wide.query_dense(USER, DATASET, [1.0, 0, 0], 5)) == ["new"]
        assert ids(await same.query_dense(USER, DATASET, E1, 5)) == ["same-dim"]
        assert ids(await wide.query_sparse(USER, DATASET, sv({7: 1.0}), 5)) == ["new"]
        assert await ready.query_sparse(USER, DATASET, sv({7: 1.0}), 5) == []
        with pytest.raises(EmbeddingDimensionMismatch):
            await wide.upsert_dense([dense("x", E1)])

    async def test_delete_user_empties_one_tenant_of_one_space(self, ready: VectorIndex) -> None:
        spaces = await self.spaces(ready)
        space = VectorSpace(1, DIM)
        shadow = await spaces.in_space(space)
        for index in (ready, shadow):
            await index.upsert_dense(
                [
                    dense("a1", E1),
                    dense("a2", E2, dataset_id="dataset-2"),
                    dense("b1", E1, user_id="user-2"),
                ]
            )
            await index.upsert_sparse(
                [
                    sparse("a1", {1: 1.0}),
                    sparse("a2", {1: 1.0}, dataset_id="dataset-2"),
                    sparse("b1", {1: 1.0}, user_id="user-2"),
                ]
            )
        await spaces.delete_user(space, USER)
        assert await shadow.query_dense(USER, DATASET, E1, 5) == []
        assert await shadow.query_dense(USER, "dataset-2", E2, 5) == []
        assert await shadow.query_sparse(USER, DATASET, sv({1: 1.0}), 5) == []
        assert await shadow.query_sparse(USER, "dataset-2", sv({1: 1.0}), 5) == []
        assert ids(await shadow.query_dense("user-2", DATASET, E1, 5)) == ["b1"]
        assert ids(await shadow.query_sparse("user-2", DATASET, sv({1: 1.0}), 5)) == ["b1"]
        # generation 0 is untouched: dense and sparse, both datasets
        assert ids(await ready.query_dense(USER, DATASET, E1, 5)) == ["a1"]
        assert ids(await ready.query_dense(USER, "dataset-2", E2, 5)) == ["a2"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == ["a1"]
        assert ids(await ready.query_sparse(USER, "dataset-2", sv({1: 1.0}), 5)) == ["a2"]
        await spaces.delete_user(VectorSpace(3, DIM), USER)  # a space never written: no error
        await shadow.upsert_dense([dense("a3", E3)])  # the space still takes writes
        assert ids(await shadow.query_dense(USER, DATASET, E3, 5)) == ["a3"]

    async def test_a_base_sweep_removes_only_the_users_dense_vectors(
        self, ready: VectorIndex
    ) -> None:
        """Sparse vectors live in generation 0 whatever the active generation: the sweep of
        generation 0 after a swap takes the user's dense vectors and leaves the sparse ones
        (a point with nothing else goes); another user keeps both."""
        spaces = await self.spaces(ready)
        await ready.upsert_dense(
            [
                dense("a1", E1),
                dense("a2", E2, dataset_id="dataset-2"),
                dense("dense-only", E1),
                dense("b1", E1, user_id="user-2"),
            ]
        )
        await ready.upsert_sparse(
            [
                sparse("a1", {1: 1.0}),
                sparse("a2", {1: 1.0}, dataset_id="dataset-2"),
                sparse("sparse-only", {1: 0.5}),
                sparse("b1", {1: 1.0}, user_id="user-2"),
            ]
        )
        await spaces.delete_user(VectorSpace(0, DIM), USER)
        assert await ready.query_dense(USER, DATASET, E1, 5) == []
        assert await ready.query_dense(USER, "dataset-2", E2, 5) == []
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == [
            "a1",
            "sparse-only",
        ]
        [hit] = await ready.query_sparse(USER, "dataset-2", sv({1: 1.0}), 5)
        assert hit.chunk_id == "a2" and hit.payload == payload(dataset_id="dataset-2")
        assert ids(await ready.query_dense("user-2", DATASET, E1, 5)) == ["b1"]
        assert ids(await ready.query_sparse("user-2", DATASET, sv({1: 1.0}), 5)) == ["b1"]
        if isinstance(ready, ScopeSizes):
            assert await ready.largest_scope() == 1  # user-2's one dense point
        await spaces.delete_user(VectorSpace(0, DIM), USER)  # again: nothing left, no error
        with pytest.raises(EmbeddingDimensionMismatch):
            await spaces.delete_user(VectorSpace(0, DIM + 1), USER)
        # a dense vector written again (a rollback's re-embed) is found, the sparse kept
        await ready.upsert_dense([dense("a1", E3), dense("dense-only", E3)])
        assert sorted(ids(await ready.query_dense(USER, DATASET, E3, 5))) == ["a1", "dense-only"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == [
            "a1",
            "sparse-only",
        ]
        await ready.delete_chunks(USER, DATASET, ["a1"])
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == ["sparse-only"]

    async def test_a_base_sweep_leaves_the_shadow_alone(self, ready: VectorIndex) -> None:
        spaces = await self.spaces(ready)
        shadow = await spaces.in_space(VectorSpace(1, 3))
        await ready.upsert_dense([dense("a1", E1)])
        await ready.upsert_sparse([sparse("a1", {1: 1.0})])
        await shadow.upsert_dense([dense("a1", [0, 1.0, 0])])
        await spaces.delete_user(VectorSpace(0, DIM), USER)
        assert ids(await shadow.query_dense(USER, DATASET, [0, 1.0, 0], 5)) == ["a1"]
        assert ids(await ready.query_sparse(USER, DATASET, sv({1: 1.0}), 5)) == ["a1"]
        assert await ready.query_dense(USER, DATASET, E1, 5) == []
