"""In-memory vector and keyword indexes, scoped by user + dataset + document."""

from __future__ import annotations

from collections.abc import Sequence

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.keyword_index import KeywordDoc, KeywordHit
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
)
from tests.fakes.faults import Faults


class FakeVectorIndex:
    def __init__(self, faults: Faults | None = None, dimension: int | None = None) -> None:
        self.faults = faults or Faults()
        self.dimension = dimension
        self.dense: dict[str, tuple[Sequence[float], ChunkPayload]] = {}
        self.sparse: dict[str, tuple[SparseVector, ChunkPayload]] = {}
        self.dense_writes: list[str] = []
        self.sparse_writes: list[str] = []

    async def ensure_collection(self, dimension: int) -> None:
        self.faults.check("vectors.ensure_collection")
        if self.dimension is None:
            self.dimension = dimension
        elif self.dimension != dimension:
            raise EmbeddingDimensionMismatch(self.dimension, dimension, "collection")

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        self.faults.check("vectors.upsert_dense")
        for point in points:
            if self.dimension is not None and len(point.vector) != self.dimension:
                raise EmbeddingDimensionMismatch(self.dimension, len(point.vector), "upsert")
        for point in points:
            self.dense[point.chunk_id] = (point.vector, point.payload)
            self.dense_writes.append(point.chunk_id)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        self.faults.check("vectors.upsert_sparse")
        for point in points:
            self.sparse[point.chunk_id] = (point.sparse, point.payload)
            self.sparse_writes.append(point.chunk_id)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        self.faults.check("vectors.delete_document")

        def keep(payload: ChunkPayload) -> bool:
            return (payload.user_id, payload.dataset_id, payload.doc_id) != (
                user_id,
                dataset_id,
                doc_id,
            )

        self.dense = {k: v for k, v in self.dense.items() if keep(v[1])}
        self.sparse = {k: v for k, v in self.sparse.items() if keep(v[1])}

    async def query_dense(
        self, user_id: str, dataset_id: str, vector: Sequence[float], limit: int
    ) -> list[VectorHit]:
        hits = [
            VectorHit(cid, sum(a * b for a, b in zip(v, vector, strict=False)), p)
            for cid, (v, p) in self.dense.items()
            if p.user_id == user_id and p.dataset_id == dataset_id
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    async def query_sparse(
        self, user_id: str, dataset_id: str, sparse: SparseVector, limit: int
    ) -> list[VectorHit]:
        return []

    async def close(self) -> None:
        return None


class FakeKeywordIndex:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.docs: dict[str, KeywordDoc] = {}
        self.deletes = 0
        self.writes = 0

    def of_document(self, user_id: str, dataset_id: str, doc_id: str) -> list[KeywordDoc]:
        return [
            d
            for d in self.docs.values()
            if (d.user_id, d.dataset_id, d.doc_id) == (user_id, dataset_id, doc_id)
        ]

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> int:
        self.faults.check("keywords.delete")
        gone = [d.chunk_id for d in self.of_document(user_id, dataset_id, doc_id)]
        for chunk_id in gone:
            del self.docs[chunk_id]
        self.deletes += 1
        return len(gone)

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        self.faults.check("keywords.write")
        half = len(docs) // 2
        for doc in docs[:half]:
            self.docs[doc.chunk_id] = doc
        self.faults.check("keywords.write.partial")  # fail after half was written
        for doc in docs[half:]:
            self.docs[doc.chunk_id] = doc
        self.writes += 1

    async def search(
        self, user_id: str, dataset_id: str, tokens: Sequence[str], limit: int
    ) -> list[KeywordHit]:
        wanted = set(tokens)
        hits = [
            KeywordHit(d.chunk_id, d.doc_id, float(len(wanted & set(d.tokens))))
            for d in self.docs.values()
            if d.user_id == user_id and d.dataset_id == dataset_id and wanted & set(d.tokens)
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    async def close(self) -> None:
        return None
