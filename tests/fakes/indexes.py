"""In-memory vector and keyword indexes, scoped by user + dataset (+ document).

Both hold the contract kits of their ports (tests/fakes/test_fakes_hold_the_kits.py):
- FakeVectorIndex: `VectorIndexContract` and `MetadataFilterContract` (`where` evaluated
  by the domain's `matches` on each point before ranking); not `IdfSparseRankingContract`
  (sparse scores are the plain dot product of the weights, no IDF).
- FakeKeywordIndex: `KeywordIndexContract` and `MetadataFilterContract`; scores are the
  query terms' frequencies in the chunk (more matches and more occurrences rank first),
  not BM25.

`dense`, `sparse` and `docs` are views keyed by chunk_id for assertions in tests that use
one tenant; the stores behind them are keyed by (user_id, dataset_id, chunk_id), so the same
chunk_id in two scopes is two entries, as in the real indexes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import attrs

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.keyword_index import KeywordDoc, KeywordHit
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndexError,
    VectorSpace,
)
from ragline.domain.metadata import DocumentMetadata, MetadataFilter, matches
from tests.fakes.faults import Faults

ScopedId = tuple[str, str, str]  # (user_id, dataset_id, chunk_id)


@attrs.define
class _Point:
    payload: ChunkPayload
    vector: Sequence[float] | None = None
    sparse: SparseVector | None = None


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=False)) / norm if norm else 0.0


class FakeVectorIndex:
    def __init__(self, faults: Faults | None = None, dimension: int | None = None) -> None:
        self.faults = faults or Faults()
        self.dimension = dimension
        self.points: dict[ScopedId, _Point] = {}
        self.chunk_deletes = 0  # delete_chunks calls (a lineage swap makes one)
        self.dense_writes: list[str] = []
        self.sparse_writes: list[str] = []
        self.spaces: dict[VectorSpace, FakeVectorIndex] = {}  # generations past 0

    @property
    def dense(self) -> dict[str, tuple[Sequence[float], ChunkPayload]]:
        """chunk_id -> (vector, payload) of every point with a dense vector."""
        return {
            key[2]: (p.vector, p.payload) for key, p in self.points.items() if p.vector is not None
        }

    @property
    def sparse(self) -> dict[str, tuple[SparseVector, ChunkPayload]]:
        """chunk_id -> (sparse vector, payload) of every point with a sparse vector."""
        return {
            key[2]: (p.sparse, p.payload) for key, p in self.points.items() if p.sparse is not None
        }

    @staticmethod
    def _key(chunk_id: str, payload: ChunkPayload) -> ScopedId:
        return (payload.user_id, payload.dataset_id, chunk_id)

    def _point(self, chunk_id: str, payload: ChunkPayload) -> _Point:
        """The stored point (created if absent); the payload given replaces the stored one."""
        point = self.points.setdefault(self._key(chunk_id, payload), _Point(payload))
        point.payload = payload
        return point

    async def ensure_collection(self, dimension: int) -> None:
        self.faults.check("vectors.ensure_collection")
        if self.dimension is None:
            self.dimension = dimension
        elif self.dimension != dimension:
            raise EmbeddingDimensionMismatch(self.dimension, dimension, "collection")

    def _require_collection(self, points: Sequence[object]) -> int:
        if self.dimension is None and points:
            raise VectorIndexError("collection missing: call ensure_collection first")
        return self.dimension or 0

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        self.faults.check("vectors.upsert_dense")
        dimension = self._require_collection(points)
        for point in points:
            if len(point.vector) != dimension:
                raise EmbeddingDimensionMismatch(dimension, len(point.vector), "upsert")
        for point in points:
            self._point(point.chunk_id, point.payload).vector = list(point.vector)
            self.dense_writes.append(point.chunk_id)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        self.faults.check("vectors.upsert_sparse")
        self._require_collection(points)
        for point in points:
            self._point(point.chunk_id, point.payload).sparse = point.sparse
            self.sparse_writes.append(point.chunk_id)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        self.faults.check("vectors.delete_document")
        self.points = {
            key: p
            for key, p in self.points.items()
            if (p.payload.user_id, p.payload.dataset_id, p.payload.doc_id)
            != (user_id, dataset_id, doc_id)
        }

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        self.faults.check("vectors.relabel_document")
        for key, p in self.points.items():
            if key[:2] == (user_id, dataset_id) and p.payload.doc_id == doc_id:
                p.payload = attrs.evolve(p.payload, metadata=metadata)

    def _in_scope(
        self, user_id: str, dataset_id: str, where: MetadataFilter | None = None
    ) -> list[tuple[str, _Point]]:
        return [
            (key[2], p)
            for key, p in self.points.items()
            if key[:2] == (user_id, dataset_id) and matches(where, p.payload.metadata.indexed())
        ]

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        self.faults.check("vectors.delete_chunks")
        self.chunk_deletes += 1
        for chunk_id in chunk_ids:
            self.points.pop((user_id, dataset_id, chunk_id), None)

    @staticmethod
    def _best(hits: list[VectorHit], limit: int) -> list[VectorHit]:
        return sorted(hits, key=lambda h: (-h.score, h.chunk_id))[: max(limit, 0)]

    async def query_dense(
        self,
        user_id: str,
        dataset_id: str,
        vector: Sequence[float],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        """Exact cosine similarity over the scope."""
        self.faults.check("vectors.query_dense")
        hits = [
            VectorHit(chunk_id, _cosine(p.vector, vector), p.payload)
            for chunk_id, p in self._in_scope(user_id, dataset_id, where)
            if p.vector is not None
        ]
        return self._best(hits, limit)

    async def query_sparse(
        self,
        user_id: str,
        dataset_id: str,
        sparse: SparseVector,
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        """Plain dot product of the weights (no IDF); only points sharing a term are hits."""
        self.faults.check("vectors.query_sparse")
        query = dict(zip(sparse.indices, sparse.values, strict=True))
        hits = []
        for chunk_id, p in self._in_scope(user_id, dataset_id, where):
            if p.sparse is None:
                continue
            pairs = zip(p.sparse.indices, p.sparse.values, strict=True)
            matched = [query[t] * w for t, w in pairs if t in query]
            if matched:
                hits.append(VectorHit(chunk_id, sum(matched), p.payload))
        return self._best(hits, limit)

    async def in_space(self, space: VectorSpace) -> FakeVectorIndex:
        """Generation 0 is this index; each later space a FakeVectorIndex of its own."""
        if space.generation == 0:
            await self.ensure_collection(space.dimension)
            return self
        index = self.spaces.setdefault(space, FakeVectorIndex(self.faults))
        await index.ensure_collection(space.dimension)
        return index

    async def delete_user(self, space: VectorSpace, user_id: str) -> None:
        """A shadow space loses the user's points; the base only their dense vectors."""
        self.faults.check("vectors.delete_user")
        index = await self.in_space(space)
        if space.generation > 0:
            index.points = {k: p for k, p in index.points.items() if k[0] != user_id}
            return
        for key, point in list(index.points.items()):  # the base keeps the sparse vectors
            if key[0] == user_id:
                point.vector = None
                if point.sparse is None:
                    del index.points[key]

    async def close(self) -> None:
        return None


class FakeKeywordIndex:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.entries: dict[ScopedId, KeywordDoc] = {}
        self.deletes = 0
        self.chunk_deletes = 0  # delete_chunks calls (a lineage swap makes one)
        self.writes = 0

    @property
    def docs(self) -> dict[str, KeywordDoc]:
        """chunk_id -> stored doc, across scopes."""
        return {key[2]: d for key, d in self.entries.items()}

    def of_document(self, user_id: str, dataset_id: str, doc_id: str) -> list[KeywordDoc]:
        return [
            d
            for d in self.entries.values()
            if (d.user_id, d.dataset_id, d.doc_id) == (user_id, dataset_id, doc_id)
        ]

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> int:
        self.faults.check("keywords.delete")
        gone = self.of_document(user_id, dataset_id, doc_id)
        for doc in gone:
            del self.entries[(doc.user_id, doc.dataset_id, doc.chunk_id)]
        self.deletes += 1
        return len(gone)

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        self.faults.check("keywords.delete_chunks")
        self.chunk_deletes += 1
        for chunk_id in chunk_ids:
            self.entries.pop((user_id, dataset_id, chunk_id), None)

    async def retire_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        await self.delete_chunks(user_id, dataset_id, chunk_ids)

    def _store(self, doc: KeywordDoc) -> None:
        key = (doc.user_id, doc.dataset_id, doc.chunk_id)
        self.entries[key] = attrs.evolve(doc, tokens=list(doc.tokens), payload=dict(doc.payload))

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        self.faults.check("keywords.write")
        half = len(docs) // 2
        for doc in docs[:half]:
            self._store(doc)
        self.faults.check("keywords.write.partial")  # fail after half was written
        for doc in docs[half:]:
            self._store(doc)
        self.writes += 1

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        self.faults.check("keywords.relabel")
        for doc in self.of_document(user_id, dataset_id, doc_id):
            self._store(attrs.evolve(doc, metadata=metadata))

    async def search(
        self,
        user_id: str,
        dataset_id: str,
        tokens: Sequence[str],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[KeywordHit]:
        """Score = occurrences of the query's distinct tokens in the chunk (exact tokens)."""
        self.faults.check("keywords.search")
        wanted = set(tokens)
        hits = []
        for d in self.entries.values():
            if (d.user_id, d.dataset_id) != (user_id, dataset_id):
                continue
            if not matches(where, d.metadata.indexed()):
                continue
            counts = Counter(t for t in d.tokens if t in wanted)
            if counts:
                hits.append(
                    KeywordHit(d.chunk_id, d.doc_id, float(sum(counts.values())), d.payload)
                )
        return sorted(hits, key=lambda h: (-h.score, h.chunk_id))[: max(limit, 0)]

    async def close(self) -> None:
        return None
