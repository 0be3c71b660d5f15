"""Hybrid search: dense + sparse + BM25 over a tenant's chunks, fused by reciprocal rank.

Only child chunks are indexed; each hit comes back with its parent's text (the context a
reader or an LLM needs), its section path and the file it came from. Every retriever is
filtered by user_id + dataset_id, and the chunk rows are read back with the same scope, so
one tenant never sees another's text.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import attrs

from ragline.application.ports.embedder import Embedder
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.unit_of_work import ChunkRecord, UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.search.fusion import reciprocal_rank_fusion

CANDIDATES_PER_RETRIEVER = 4  # x top_k from each retriever before fusion


class NoEmbeddingConfig(LookupError):
    """The user has no EMBEDDING configuration, so nothing of theirs can have been indexed."""


@attrs.frozen
class SearchHit:
    chunk_id: str
    doc_id: str
    source: str
    section_path: tuple[str, ...]
    text: str
    parent_text: str | None
    score: float


class HybridSearch:
    """The `ragline search` use case. The embedder is the tenant's dense model (resolved by
    the caller from the user's EMBEDDING config, the same one indexing used)."""

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        vectors: VectorIndex,
        keywords: KeywordIndex,
        tokenizer: Tokenizer,
        sparse: SparseEncoder,
        embedders: EmbedderResolver,
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._keywords = keywords
        self._tokenizer = tokenizer
        self._sparse = sparse
        self._embedders = embedders

    async def search_many(
        self, queries: Sequence[str], user_id: str, dataset_id: str, top_k: int
    ) -> list[list[SearchHit]]:
        """Answer `queries` in order; the dense model embeds them in one batch."""
        async with self._uow_factory() as uow:
            embedder = await self._resolve(uow, user_id)
        vectors = await asyncio.to_thread(embedder.embed_queries, list(queries))
        answers: list[list[SearchHit]] = []
        for query, vector in zip(queries, vectors, strict=True):
            answers.append(await self._one(query, vector, user_id, dataset_id, top_k))
        return answers

    async def _resolve(self, uow: UnitOfWork, user_id: str) -> Embedder:
        config = await uow.model_configs.default_embedding(user_id)
        if config is None:
            raise NoEmbeddingConfig(f"user {user_id} has no default EMBEDDING model")
        return await self._embedders.resolve(config)

    async def _one(
        self, query: str, vector: list[float], user_id: str, dataset_id: str, top_k: int
    ) -> list[SearchHit]:
        if not query.strip():
            return []
        pool = top_k * CANDIDATES_PER_RETRIEVER
        sparse_query = self._sparse.encode_query(query)
        tokens = self._tokenizer.tokenize(query)
        dense = self._vectors.query_dense(user_id, dataset_id, vector, pool)
        sparse = self._vectors.query_sparse(user_id, dataset_id, sparse_query, pool)
        bm25 = self._keywords.search(user_id, dataset_id, tokens, pool)
        dense_hits, sparse_hits, keyword_hits = await asyncio.gather(dense, sparse, bm25)
        fused = reciprocal_rank_fusion(
            {
                "dense": [h.chunk_id for h in dense_hits],
                "sparse": [h.chunk_id for h in sparse_hits],
                "bm25": [h.chunk_id for h in keyword_hits],
            },
            limit=top_k,
        )
        return await self._hydrate(fused, user_id, dataset_id)

    async def _hydrate(
        self, fused: list[tuple[str, float]], user_id: str, dataset_id: str
    ) -> list[SearchHit]:
        if not fused:
            return []
        async with self._uow_factory() as uow:
            children = {
                c.chunk_id: c
                for c in await uow.chunks.get_many(user_id, dataset_id, [i for i, _ in fused])
            }
            parent_ids = sorted({c.parent_id for c in children.values() if c.parent_id})
            parents = {
                p.chunk_id: p for p in await uow.chunks.get_many(user_id, dataset_id, parent_ids)
            }
            sources = await self._sources(uow, {c.task_id for c in children.values()})
        hits = []
        for chunk_id, score in fused:
            child = children.get(chunk_id)
            if child is None:  # indexed but since replaced: never show text we cannot vouch for
                continue
            parent = parents.get(child.parent_id) if child.parent_id else None
            hits.append(_hit(child, parent, sources.get(child.task_id, ""), score))
        return hits

    @staticmethod
    async def _sources(uow: UnitOfWork, task_ids: set[str]) -> dict[str, str]:
        names: dict[str, str] = {}
        for task_id in task_ids:
            log = await uow.parsed_logs.get(task_id)
            if log is not None:
                payload = json.loads(log.payload_json)
                names[task_id] = str(payload.get("source_filename") or "")
        return names


def _hit(child: ChunkRecord, parent: ChunkRecord | None, source: str, score: float) -> SearchHit:
    return SearchHit(
        chunk_id=child.chunk_id,
        doc_id=child.scope.doc_id,
        source=source,
        section_path=child.section_path,
        text=child.text,
        parent_text=parent.text if parent is not None else None,
        score=score,
    )
