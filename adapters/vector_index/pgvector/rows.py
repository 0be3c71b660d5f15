"""Rows in and out of the pgvector tables: a point's row from its payload, hits from result
rows, a sparse vector's postings, write batches, and a driver error without its parameters."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
)

T = TypeVar("T", DensePoint, SparsePoint)
MAX_TERM = 2**63 - 1
Key = tuple[str, str, str]


def point_row(chunk_id: str, payload: ChunkPayload) -> dict[str, Any]:
    return {
        "user_id": payload.user_id,
        "dataset_id": payload.dataset_id,
        "chunk_id": chunk_id,
        "doc_id": payload.doc_id,
        "parent_id": payload.parent_id,
        "extra": dict(payload.extra),
        "meta": payload.metadata.indexed(),
        "has_sparse": False,
    }


def dense_hits(user_id: str, dataset_id: str, rows: list[Any]) -> list[VectorHit]:
    rows.sort(key=lambda r: (float(r.distance), str(r.chunk_id)))  # relaxed_order
    return [hit_of(user_id, dataset_id, r, 1.0 - float(r.distance)) for r in rows]


def hit_of(user_id: str, dataset_id: str, row: Any, score: float) -> VectorHit:
    """A hit from a result row (chunk_id, doc_id, parent_id, extra, ...)."""
    extra = row.extra or {}
    return VectorHit(
        chunk_id=str(row.chunk_id),
        score=score,
        payload=ChunkPayload(
            user_id=user_id,
            dataset_id=dataset_id,
            doc_id=str(row.doc_id),
            parent_id=row.parent_id,
            extra={str(k): str(v) for k, v in extra.items()},
        ),
    )


def term_weights(sparse: SparseVector) -> dict[int, float]:
    """Term -> weight (a repeated term keeps its last weight; out-of-range terms dropped)."""
    return {
        int(term): float(value)
        for term, value in zip(sparse.indices, sparse.values, strict=True)
        if 0 <= int(term) <= MAX_TERM
    }


def last_per_key(points: Sequence[T]) -> list[T]:
    """One point per (scope, chunk_id), the last given, in key order: one INSERT may not
    touch a row twice, and a fixed order keeps concurrent writers from deadlocking."""
    latest: dict[Key, T] = {}
    for point in points:
        latest[(point.payload.user_id, point.payload.dataset_id, point.chunk_id)] = point
    return [latest[key] for key in sorted(latest)]


def batches_of(items: Sequence[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def reason(exc: BaseException) -> str:
    """The driver's message, without the statement and its (vector-sized) parameters."""
    orig = getattr(exc, "orig", None)
    return f"{type(orig or exc).__name__}: {orig or exc}".strip()
