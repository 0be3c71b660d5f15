"""Vector index port: one collection with a named dense vector and a named sparse vector.

VECTORIZING writes the dense vector of each child chunk, SPARSE_VECTORIZING writes the sparse
vector of the same point later; writing one never erases the other. Every query and delete is
scoped by user_id + dataset_id: one tenant never sees another's chunks.

Metadata filters: every point carries its document's metadata (`ChunkPayload.metadata`,
stored in the flat form `DocumentMetadata.indexed()`), and a query's `where` is applied by
the engine while it ranks, so a filtered query returns `limit` hits whenever that many
points match (never fewer by filtering afterwards). `relabel_document` replaces the
metadata of a document's points when it changes (`PUT .../documents/{id}/metadata`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs

from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.domain.metadata import DocumentMetadata, MetadataFilter

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
    "VectorSpace",
    "VectorSpaces",
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
    metadata: DocumentMetadata = attrs.field(factory=DocumentMetadata)
    """The document's metadata, written with the point; hits do not read it back."""


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

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        """Replace the metadata of every point of one document in one scope (vectors and
        the rest of the payload unchanged); nothing stored is a no-op."""
        ...

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        """Remove these chunks' points (dense and sparse) in one scope; absent ids are no
        error. A chunk switched off by its owner leaves every retriever this way."""
        ...

    async def query_dense(
        self,
        user_id: str,
        dataset_id: str,
        vector: Sequence[float],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        """Cosine nearest neighbours within one scope among the points `where` keeps
        (`ragline.domain.metadata.matches`), best first."""
        ...

    async def query_sparse(
        self,
        user_id: str,
        dataset_id: str,
        sparse: SparseVector,
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        """Sparse dot-product (IDF-weighted by the index) hits within one scope among the
        points `where` keeps, best first; an empty query vector gives no hits. The IDF
        counts every point of the scope, filtered or not."""
        ...

    async def close(self) -> None: ...


@attrs.frozen
class VectorSpace:
    """One embedding generation's vectors (issue 21): its number and its dense dimension.
    Generation 0 is the index as it always was; a shadow generation's points live apart from
    it, so two models (even of one dimension) never share a space."""

    generation: int
    dimension: int

    def __attrs_post_init__(self) -> None:
        if self.generation < 0 or self.dimension < 1:
            raise ValueError(f"no vector space {self.generation}/{self.dimension}")


class VectorSpaces(Protocol):
    """The generation-aware capability: a VectorIndex per space, and a tenant's removal from
    one. Search takes the user's active generation (`in_space(active)`); the copy writes into
    the shadow's; cancel and the post-swap sweep call `delete_user` on the one left behind.

    Sparse vectors always live in the base space (generation 0, this index): the re-embedding
    copies dense vectors only, SPARSE_VECTORIZING keeps writing sparse vectors there whatever
    the user's active generation, and sparse search reads them there. So the base space's
    points are shared by the dense space of generation 0 and by every generation's sparse
    side, and a sweep of generation 0 may take only the dense half of them."""

    async def in_space(self, space: VectorSpace) -> VectorIndex:
        """The index of one space, its collection ensured at the space's dimension; generation
        0 at this index's own dimension is this index. Closing this index closes them all."""
        ...

    async def delete_user(self, space: VectorSpace, user_id: str) -> None:
        """Remove `user_id`'s vectors (all datasets) from one space, nothing else.

        In a shadow space (generation > 0) every point of the user goes. In the base space
        (generation 0) only the user's dense vectors go: a point keeps its sparse vector and
        payload, sparse queries still find it, dense queries no longer do, and a later
        upsert_dense gives it a dense vector again; a point left with no vector at all goes.
        A space never written is no error."""
        ...


@runtime_checkable
class ScopeSizes(Protocol):
    """An index whose query cost grows with the scope it scans (exact search) tells how big
    its biggest scope is, so `ragline doctor` can advise a store that does not scan."""

    async def largest_scope(self) -> int:
        """Dense points in the (user_id, dataset_id) scope that holds most; 0 when empty."""
        ...
