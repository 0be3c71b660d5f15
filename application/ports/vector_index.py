"""Vector index port: one collection with a named dense vector and a named sparse vector.

VECTORIZING writes the dense vector of each child chunk, SPARSE_VECTORIZING writes the sparse
vector of the same point later; writing one never erases the other. Every query and delete is
scoped by user_id + dataset_id: one tenant never sees another's chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector

__all__ = [
    "ChunkPayload",
    "DensePoint",
    "EmbeddingDimensionMismatch",
    "ScopeSizes",
    "SparsePoint",
    "VectorHit",
    "VectorIndex",
    "VectorIndexError",
    "VectorIndexUnavailable",
]


class VectorIndexError(Exception):
    """Base class for vector index failures (other than a dimension mismatch)."""


class VectorIndexUnavailable(VectorIndexError):
    """The engine cannot be reached or opened, or refused a write."""


@attrs.frozen
class ChunkPayload:
    """What a point carries besides its vectors: its tenant scope, document and parent."""

    user_id: str
    dataset_id: str
    doc_id: str
    parent_id: str | None = None
    extra: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class DensePoint:
    chunk_id: str
    vector: Sequence[float]
    payload: ChunkPayload


@attrs.frozen
class SparsePoint:
    chunk_id: str
    sparse: SparseVector
    payload: ChunkPayload


@attrs.frozen
class VectorHit:
    chunk_id: str
    score: float
    payload: ChunkPayload


class VectorIndex(Protocol):
    async def ensure_collection(self, dimension: int) -> None:
        """Create the collection if absent; raise EmbeddingDimensionMismatch if it exists
        with another dense dimension. Idempotent."""
        ...

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        """Write dense vectors by (scope, chunk_id), keeping any sparse vector already stored
        for the same chunk; the payload given replaces the stored one. Re-upserting the same
        point is a no-op in effect. A vector of the wrong length raises
        EmbeddingDimensionMismatch; the collection must exist (ensure_collection)."""
        ...

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        """Write sparse vectors by (scope, chunk_id), keeping any dense vector already stored;
        the payload given replaces the stored one."""
        ...

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        """Remove every point of one document in one scope (nothing else)."""
        ...

    async def query_dense(
        self, user_id: str, dataset_id: str, vector: Sequence[float], limit: int
    ) -> list[VectorHit]:
        """Cosine nearest neighbours within one scope, best first."""
        ...

    async def query_sparse(
        self, user_id: str, dataset_id: str, sparse: SparseVector, limit: int
    ) -> list[VectorHit]:
        """Sparse dot-product (IDF-weighted by the index) hits within one scope, best first;
        an empty query vector gives no hits."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class ScopeSizes(Protocol):
    """An index whose query cost grows with the scope it scans (exact search) tells how big
    its biggest scope is, so `ragline doctor` can advise a store that does not scan."""

    async def largest_scope(self) -> int:
        """Dense points in the (user_id, dataset_id) scope that holds most; 0 when empty."""
        ...
