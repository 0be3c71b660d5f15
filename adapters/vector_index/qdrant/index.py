"""VectorIndex on Qdrant: named "dense" (cosine) and "sparse" (IDF modifier) vectors.

Tenancy: on a server, one collection holds every scope and each call filters on user_id +
dataset_id (keyword payload indexes make that cheap). In local mode the filter is evaluated
in Python per point (20k points: 1.2 s of a 1.3 s query), so there each (user_id, dataset_id)
scope gets its own collection `<name>__<hash>` and queries need no filter; the collection
`<name>` itself stays empty and records the dense dimension.

Point ids are UUIDv5 of (user_id, dataset_id, chunk_id) (Qdrant wants an unsigned int or a
UUID); the chunk_id itself stays in the payload. The sync client runs in a worker thread:
qdrant's async local mode computes its brute-force search on the event loop, which would
stall every other task.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import re
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from qdrant_client import models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ragline.adapters.vector_index.qdrant import clients
from ragline.adapters.vector_index.qdrant.where import payload_filter
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.vector_index import (
    ChunkPayload,
    DensePoint,
    SparsePoint,
    VectorHit,
    VectorIndexError,
    VectorIndexUnavailable,
    VectorSpace,
)
from ragline.domain.metadata import DocumentMetadata, MetadataFilter

DENSE = "dense"
SPARSE = "sparse"
POINT_NAMESPACE = uuid.UUID("5b0c7d1e-3f7a-4c52-9a0e-6a9f2b8e4d10")
SCOPE_FIELDS = ("user_id", "dataset_id", "doc_id")
T = TypeVar("T")
Row = tuple[str, dict[str, Any], ChunkPayload]


def point_id(user_id: str, dataset_id: str, chunk_id: str) -> str:
    """Deterministic Qdrant point id for a chunk within its tenant scope (the same chunk_id
    in two scopes is two points)."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{user_id}\x1f{dataset_id}\x1f{chunk_id}"))


class QdrantVectorIndex:
    """One logical collection. Give exactly one of `path` (local, embedded default),
    `location=":memory:"` or `url` (server)."""

    def __init__(
        self,
        collection: str = "ragline_chunks",
        *,
        path: str | None = None,
        location: str | None = None,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        write_batch: int = 256,
    ) -> None:
        if sum(x is not None for x in (path, location, url)) != 1:
            raise ValueError("give exactly one of path=, location=':memory:' or url=")
        if location is not None and location != ":memory:":
            raise ValueError("location must be ':memory:' (use url= for a server)")
        self._collection = collection
        self._write_batch = write_batch
        self._dimension: int | None = None
        self._relaxed: set[str] = set()
        try:
            if path is not None:
                self._shared = clients.borrow_local(path)
            elif url is not None:
                self._shared = clients.remote(url, api_key, timeout)
            else:
                self._shared = clients.in_memory()
        except (RuntimeError, OSError) as exc:  # e.g. the path is locked by another process
            raise VectorIndexUnavailable(f"cannot open qdrant: {exc}") from exc
        self._closed = False
        self._remote = url is not None
        self._spaces: dict[VectorSpace, QdrantVectorIndex] = {}

    # -- plumbing -----------------------------------------------------------------------
    async def _run(self, call: Callable[[], T]) -> T:
        if self._closed:
            raise VectorIndexError("vector index is closed")
        lock = self._shared.lock

        def guarded() -> T:
            try:
                if lock is None:
                    return call()
                with lock:
                    return call()
            except (UnexpectedResponse, ResponseHandlingException, ConnectionError) as exc:
                raise VectorIndexUnavailable(f"qdrant: {exc}") from exc

        return await asyncio.to_thread(guarded)

    def _name(self, user_id: str, dataset_id: str) -> str:
        """The collection holding one scope's points."""
        if self._remote:
            return self._collection
        key = f"{user_id}\x1f{dataset_id}".encode("utf-8", "surrogatepass")
        return f"{self._collection}__{hashlib.sha256(key).hexdigest()[:32]}"

    def _filter(
        self,
        user_id: str,
        dataset_id: str,
        doc_id: str | None,
        where: MetadataFilter | None = None,
    ) -> models.Filter | None:
        wanted = {"doc_id": doc_id}
        if self._remote:
            wanted.update(user_id=user_id, dataset_id=dataset_id)
        must: list[models.Condition] = [
            models.FieldCondition(key=key, match=models.MatchValue(value=value))
            for key, value in wanted.items()
            if value is not None
        ]
        if where is not None:
            must.append(payload_filter(where))
        return models.Filter(must=must) if must else None

    @staticmethod
    def _payload(chunk_id: str, payload: ChunkPayload) -> dict[str, Any]:
        return {
            "chunk_id": chunk_id,
            "user_id": payload.user_id,
            "dataset_id": payload.dataset_id,
            "doc_id": payload.doc_id,
            "parent_id": payload.parent_id,
            "extra": dict(payload.extra),
            "meta": payload.metadata.indexed(),
        }

    @staticmethod
    def _hit(point: models.ScoredPoint) -> VectorHit:
        p = point.payload or {}
        return VectorHit(
            chunk_id=str(p.get("chunk_id", "")),
            score=float(point.score),
            payload=ChunkPayload(
                user_id=str(p.get("user_id", "")),
                dataset_id=str(p.get("dataset_id", "")),
                doc_id=str(p.get("doc_id", "")),
                parent_id=p.get("parent_id"),
                extra={str(k): str(v) for k, v in (p.get("extra") or {}).items()},
            ),
        )

    def _exists(self, name: str) -> bool:
        exists = bool(self._shared.client.collection_exists(name))
        if exists and name not in self._relaxed:
            self._relax_local_sync(name)
        return exists

    def _stored_dimension(self) -> int | None:
        if not self._exists(self._collection):
            return None
        info = self._shared.client.get_collection(self._collection)
        vectors = info.config.params.vectors
        if not isinstance(vectors, dict) or DENSE not in vectors:
            raise VectorIndexError(f"collection {self._collection!r} has no {DENSE!r} vector")
        return int(vectors[DENSE].size)

    def _create(self, name: str, dimension: int) -> None:
        client = self._shared.client
        client.create_collection(
            name,
            vectors_config={
                DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        if self._remote:  # local mode is brute force and ignores payload indexes
            for field in SCOPE_FIELDS:
                client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)
        self._relax_local_sync(name)

    def _relax_local_sync(self, name: str) -> None:
        """Local mode commits every point in its own SQLite transaction with a full fsync
        (~20 ms each here): 600 points took 37 s. Switch its storage to WAL with
        synchronous=NORMAL, which survives a process crash and loses at most the last writes
        on power loss (the chunk rows stay PENDING/INDEXING then, and get redone only if the
        run is retried). Reaches into qdrant-client's private local storage; does nothing if
        that shape changes or the collection lives in memory or on a server."""
        self._relaxed.add(name)
        local = getattr(self._shared.client, "_client", None)
        collection = getattr(local, "collections", {}).get(name)
        persistence = getattr(collection, "storage", None)
        connection = getattr(persistence, "storage", None)
        if isinstance(connection, sqlite3.Connection):
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")

    # -- port ---------------------------------------------------------------------------
    async def ensure_collection(self, dimension: int) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        if self._dimension is not None and not self._closed:
            # the collection's dimension never changes: already checked (search asks
            # `in_space(active)` for every query)
            if self._dimension != dimension:
                raise EmbeddingDimensionMismatch(
                    self._dimension, dimension, f"collection {self._collection}"
                )
            return

        def ensure() -> int:
            stored = self._stored_dimension()
            if stored is not None:
                return stored
            self._create(self._collection, dimension)
            return dimension

        stored = await self._run(ensure)
        if stored != dimension:
            raise EmbeddingDimensionMismatch(stored, dimension, f"collection {self._collection}")
        self._dimension = stored

    async def _known_dimension(self) -> int:
        if self._dimension is None:
            stored = await self._run(self._stored_dimension)
            if stored is None:
                raise VectorIndexError("collection missing: call ensure_collection first")
            self._dimension = stored
        return self._dimension

    async def upsert_dense(self, points: Sequence[DensePoint]) -> None:
        if not points:
            return
        dimension = await self._known_dimension()
        for point in points:
            if len(point.vector) != dimension:
                raise EmbeddingDimensionMismatch(dimension, len(point.vector), point.chunk_id)
        rows = [(p.chunk_id, {DENSE: [float(x) for x in p.vector]}, p.payload) for p in points]
        await self._write_all(rows, dimension)

    async def upsert_sparse(self, points: Sequence[SparsePoint]) -> None:
        if not points:
            return
        dimension = await self._known_dimension()
        rows = [(p.chunk_id, {SPARSE: _sparse(p.sparse)}, p.payload) for p in points]
        await self._write_all(rows, dimension)

    async def _write_all(self, rows: list[Row], dimension: int) -> None:
        by_collection: dict[str, list[Row]] = {}
        for row in rows:
            by_collection.setdefault(self._name(row[2].user_id, row[2].dataset_id), []).append(row)
        for name, part in by_collection.items():
            for start in range(0, len(part), self._write_batch):
                batch = part[start : start + self._write_batch]
                await self._run(functools.partial(self._write, name, batch, dimension))

    def _write(self, name: str, rows: list[Row], dimension: int) -> None:
        """Upsert new points; for existing ones replace only the given named vector (and the
        payload), so the other named vector survives."""
        client = self._shared.client
        if not self._exists(name):
            self._create(name, dimension)
        ids = [point_id(p.user_id, p.dataset_id, chunk_id) for chunk_id, _, p in rows]
        existing = {
            str(r.id): r.payload
            for r in client.retrieve(name, ids, with_payload=True, with_vectors=False)
        }
        fresh: list[models.PointStruct] = []
        updates: list[models.PointVectors] = []
        ops: list[models.UpdateOperation] = []
        for pid, (chunk_id, vector, payload) in zip(ids, rows, strict=True):
            body = self._payload(chunk_id, payload)
            if pid in existing:
                updates.append(models.PointVectors(id=pid, vector=vector))
                if existing[pid] == body:  # the usual case: same chunk, same payload
                    continue
                ops.append(
                    models.OverwritePayloadOperation(
                        overwrite_payload=models.SetPayload(payload=body, points=[pid])
                    )
                )
            else:
                fresh.append(models.PointStruct(id=pid, vector=vector, payload=body))
        if updates:
            vectors = models.UpdateVectors(points=updates)
            ops.insert(0, models.UpdateVectorsOperation(update_vectors=vectors))
        if fresh:
            ops.append(models.UpsertOperation(upsert=models.PointsList(points=fresh)))
        client.batch_update_points(name, ops, wait=True)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> None:
        name = self._name(user_id, dataset_id)
        document = self._filter(user_id, dataset_id, doc_id)
        assert document is not None  # doc_id always narrows it  # nosec B101
        selector = models.FilterSelector(filter=document)

        def delete() -> None:
            if self._exists(name):
                self._shared.client.delete(name, points_selector=selector, wait=True)

        await self._run(delete)

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        name = self._name(user_id, dataset_id)
        document = self._filter(user_id, dataset_id, doc_id)
        assert document is not None  # doc_id always narrows it  # nosec B101
        labels = {"meta": metadata.indexed()}  # a top-level key: replaced whole

        def relabel() -> None:
            if self._exists(name):
                self._shared.client.set_payload(
                    name, labels, points=models.FilterSelector(filter=document), wait=True
                )

        await self._run(relabel)

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        name = self._name(user_id, dataset_id)
        ids: list[models.ExtendedPointId] = [
            point_id(user_id, dataset_id, c) for c in dict.fromkeys(chunk_ids)
        ]
        if not ids:
            return
        selector = models.PointIdsList(points=ids)

        def delete() -> None:
            if self._exists(name):
                self._shared.client.delete(name, points_selector=selector, wait=True)

        await self._run(delete)

    async def query_dense(
        self,
        user_id: str,
        dataset_id: str,
        vector: Sequence[float],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        if limit < 1:
            return []
        if self._dimension is not None and len(vector) != self._dimension:
            raise EmbeddingDimensionMismatch(self._dimension, len(vector), "query")
        query = [float(x) for x in vector]
        return await self._query(user_id, dataset_id, query, DENSE, limit, where)

    async def query_sparse(
        self,
        user_id: str,
        dataset_id: str,
        sparse: SparseVector,
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[VectorHit]:
        if limit < 1 or not sparse.indices:
            return []
        return await self._query(user_id, dataset_id, _sparse(sparse), SPARSE, limit, where)

    async def _query(
        self,
        user_id: str,
        dataset_id: str,
        query: list[float] | models.SparseVector,
        using: str,
        limit: int,
        where: MetadataFilter | None,
    ) -> list[VectorHit]:
        name = self._name(user_id, dataset_id)
        query_filter = self._filter(user_id, dataset_id, None, where)

        def search() -> list[VectorHit]:
            if not self._exists(name):
                return []
            response = self._shared.client.query_points(
                name,
                query=query,
                using=using,
                query_filter=query_filter,
                limit=limit,
                with_payload=True,
            )
            return [self._hit(p) for p in response.points]

        return await self._run(search)

    # -- generations (VectorSpaces): a shadow generation is a collection of its own ---------
    async def in_space(self, space: VectorSpace) -> QdrantVectorIndex:
        if space.generation == 0:
            await self.ensure_collection(space.dimension)
            return self
        index = self._spaces.get(space)
        if index is None:
            index = self._sibling(f"{self._collection}_g{space.generation}_d{space.dimension}")
            self._spaces[space] = index
        await index.ensure_collection(space.dimension)
        return index

    def _sibling(self, collection: str) -> QdrantVectorIndex:
        """Another logical collection on this index's client (borrowed once more)."""
        sibling = copy.copy(self)
        sibling._collection, sibling._dimension = collection, None
        sibling._relaxed, sibling._spaces = set(), {}
        clients.borrow_again(self._shared)
        return sibling

    async def delete_user(self, space: VectorSpace, user_id: str) -> None:
        """A shadow space loses the user's points; the base space (which keeps every
        generation's sparse vectors) only their dense vectors, and the points left with none."""
        index = await self.in_space(space)
        user = models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id))
        mine = models.Filter(must=[user])
        no_sparse = models.Filter(
            must=[user], must_not=[models.HasVectorCondition(has_vector=SPARSE)]
        )
        scope_collection = re.compile(re.escape(index._collection) + "__[0-9a-f]{32}")
        base = space.generation == 0

        def sweep(client: Any, name: str) -> None:
            client.delete(name, models.FilterSelector(filter=no_sparse), wait=True)
            client.delete_vectors(name, [DENSE], models.FilterSelector(filter=mine), wait=True)

        def delete() -> None:
            client = index._shared.client
            if index._remote:
                if base:
                    sweep(client, index._collection)
                else:
                    client.delete(index._collection, models.FilterSelector(filter=mine), wait=True)
                return
            # local mode: one collection per scope, each of one user; the user's go (or, in
            # the base space, lose their dense vectors)
            for found in client.get_collections().collections:
                if not scope_collection.fullmatch(found.name):
                    continue
                points, _ = client.scroll(found.name, scroll_filter=mine, limit=1)
                if not points:
                    continue
                if base:
                    sweep(client, found.name)
                else:
                    client.delete_collection(found.name)
                    index._relaxed.discard(found.name)

        await index._run(delete)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for index in self._spaces.values():
            await index.close()
        await asyncio.to_thread(clients.give_back, self._shared)


def _sparse(vector: SparseVector) -> models.SparseVector:
    return models.SparseVector(
        indices=[int(i) for i in vector.indices], values=[float(v) for v in vector.values]
    )
