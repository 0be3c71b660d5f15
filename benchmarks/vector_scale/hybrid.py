"""HybridSearch end to end over the index being measured, for the queried tenant.

The container of a data dir wires the real use case (SQLite unit of work, Tantivy, the jieba
tokenizer, the term sparse encoder, the configured search tuning); only its vector index is
the one under test and its embedder returns the benchmark's query vectors (the synthetic
corpus has no text an embedding model could match; the e5 query cost is in
benchmarks/search). The SQL rows, BM25 docs and encoder sparse vectors are those of the
queried tenant only: the other tenants' chunks live in the vector index alone, so the
figure shows what the vector store's size adds to a search, not SQLite's or Tantivy's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dependency_injector import providers

from benchmarks.search.build import _records
from benchmarks.vector_scale.data import DATASET, DIMENSION, QUERIED, Layout, Texts, user
from ragline.application.health import obtain
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.vector_index import SparsePoint, VectorIndex
from ragline.bootstrap.container import Container, container_for


class QueryVectors:
    """Embedder and resolver in one: each query gets the next benchmark query vector."""

    model_name = "benchmark-queries"
    dimension = DIMENSION

    def __init__(self, vectors: Sequence[list[float]]) -> None:
        self._vectors, self._next = list(vectors), 0

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for _ in texts:
            out.append(self._vectors[self._next % len(self._vectors)])
            self._next += 1
        return out

    async def resolve(self, config: Any) -> QueryVectors:
        return self


async def prepare(
    data_dir: Path, index: VectorIndex, layout: Layout, texts: Texts, queries: list[list[float]]
) -> tuple[Container, Any, float]:
    """The wired HybridSearch with the queried tenant's rows written; seconds spent."""
    container = container_for(data_dir)
    container.vectors.override(providers.Object(index))
    container.embedders.override(providers.Object(QueryVectors(queries)))
    started = time.perf_counter()
    uow_factory = await obtain(container.uow_factory)
    keywords = await obtain(container.keywords)
    tokenizer, sparse = container.tokenizer(), container.sparse()
    owner = user(QUERIED)
    await (await obtain(container.provision_embedding))(owner)
    mine = layout.tenant_points()
    for start in range(0, len(mine), 100):
        doc_points = mine[start : start + 100]
        _, first = layout.payload(int(doc_points[0]))
        scope = DocumentScope(owner, DATASET, first.doc_id)
        rows = _records(scope, f"bench-{first.doc_id}", [texts.text(int(i)) for i in doc_points])
        async with uow_factory() as uow:
            await uow.chunks.replace_document(scope, rows)
            await uow.commit()
        children = [r for r in rows if r.parent_id is not None]
        payloads = [layout.payload(int(i))[1] for i in doc_points]
        encoded = sparse.encode_documents([c.text for c in children])
        await index.upsert_sparse(
            [
                SparsePoint(c.chunk_id, e, p)
                for c, e, p in zip(children, encoded, payloads, strict=True)
            ]
        )
        await keywords.write(
            [
                KeywordDoc(
                    c.chunk_id,
                    scope.doc_id,
                    owner,
                    DATASET,
                    c.parent_id,
                    tokenizer.tokenize(c.text),
                )
                for c in children
            ]
        )
    search = await obtain(container.hybrid_search)
    return container, search, time.perf_counter() - started
