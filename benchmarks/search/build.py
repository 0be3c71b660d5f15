"""Build a tenant index of N child chunks through ragline's ports (no embedding model).

Chunk truth rows go through the SQL unit of work (parents of 4 children each, 100 children
per document), dense points are random unit vectors, sparse points come from the real
TermSparseEncoder, keyword docs from the real tokenizer, all written with the adapters the
container chooses for embedded mode (SQLite, the embedded vector index, Tantivy).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.vector_index import ChunkPayload, DensePoint, SparsePoint
from ragline.domain.parse_run import ChunkIndexStatus

CHILDREN_PER_DOC = 100
CHILDREN_PER_PARENT = 4
DIMENSION = 384


def _records(scope: DocumentScope, task_id: str, texts: list[str]) -> list[ChunkRecord]:
    rows: list[ChunkRecord] = []
    doc = scope.doc_id
    for p in range(0, len(texts), CHILDREN_PER_PARENT):
        group = texts[p : p + CHILDREN_PER_PARENT]
        parent_id = f"{doc}-p{p // CHILDREN_PER_PARENT}"
        section = ("Library", f"doc {doc}", f"section {p // 20}")
        common: dict[str, Any] = {
            "scope": scope,
            "task_id": task_id,
            "section_path": section,
            "canonical_path": "/" + "/".join(section),
            "structure_node_id": None,
            "source_type": "markdown",
        }
        rows.append(
            ChunkRecord(
                chunk_id=parent_id,
                parent_id=None,
                order_index=len(rows),
                text="\n\n".join(group),
                node_type="section",
                span_start=p * 500,
                span_end=(p + len(group)) * 500,
                **common,
            )
        )
        for i, text in enumerate(group):
            rows.append(
                ChunkRecord(
                    chunk_id=f"{doc}-c{p + i}",
                    parent_id=parent_id,
                    order_index=len(rows),
                    text=text,
                    node_type="paragraph",
                    span_start=(p + i) * 500,
                    span_end=(p + i) * 500 + len(text),
                    dense_status=ChunkIndexStatus.SUCCESS,
                    sparse_status=ChunkIndexStatus.SUCCESS,
                    **common,
                )
            )
    return rows


async def build(
    parts: dict[str, Any], texts: list[str], user_id: str, dataset_id: str
) -> dict[str, float]:
    """Write every chunk; seconds spent per store."""
    uow_factory, vectors, keywords = parts["uow_factory"], parts["vectors"], parts["keywords"]
    tokenizer, sparse = parts["tokenizer"], parts["sparse"]
    rng = np.random.default_rng(5)
    spent = {"sql": 0.0, "dense": 0.0, "sparse": 0.0, "keyword": 0.0}
    await vectors.ensure_collection(DIMENSION)
    for d, start in enumerate(range(0, len(texts), CHILDREN_PER_DOC)):
        doc_texts = texts[start : start + CHILDREN_PER_DOC]
        scope = DocumentScope(user_id, dataset_id, str(1000 + d))
        rows = _records(scope, f"bench-task-{d}", doc_texts)
        children = [r for r in rows if r.parent_id is not None]
        t0 = time.perf_counter()
        async with uow_factory() as uow:
            await uow.chunks.replace_document(scope, rows)
            await uow.commit()
        t1 = time.perf_counter()
        matrix = rng.standard_normal((len(children), DIMENSION)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        payloads = [ChunkPayload(user_id, dataset_id, scope.doc_id, c.parent_id) for c in children]
        await vectors.upsert_dense(
            [
                DensePoint(c.chunk_id, matrix[i].tolist(), payloads[i])
                for i, c in enumerate(children)
            ]
        )
        t2 = time.perf_counter()
        encoded = sparse.encode_documents([c.text for c in children])
        await vectors.upsert_sparse(
            [SparsePoint(c.chunk_id, encoded[i], payloads[i]) for i, c in enumerate(children)]
        )
        t3 = time.perf_counter()
        await keywords.write(
            [
                KeywordDoc(
                    c.chunk_id,
                    scope.doc_id,
                    user_id,
                    dataset_id,
                    c.parent_id,
                    tokenizer.tokenize(c.text),
                )
                for c in children
            ]
        )
        t4 = time.perf_counter()
        spent["sql"] += t1 - t0
        spent["dense"] += t2 - t1
        spent["sparse"] += t3 - t2
        spent["keyword"] += t4 - t3
        if d % 50 == 0:
            print(f"  built {start + len(doc_texts)} / {len(texts)} children", flush=True)
    return {k: round(v, 1) for k, v in spent.items()}
