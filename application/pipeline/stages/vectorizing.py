"""VECTORIZING: dense vectors for every child chunk not yet dense SUCCESS (stage 3 of
docs/design/0001-pipeline-contract.md).

The embedder comes from the user's default EMBEDDING config: missing -> LLM_CONFIG_MISSING
before any chunk status changes (no system fallback: docs/design/0001-pipeline-contract.md; the
reason says how to set one); a model whose output dimension differs from the config or
the collection -> EMBEDDING_DIMENSION_UNSUPPORTED.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import ClassVar, Protocol

from ragline.application.error_text import StageFailure, describe
from ragline.application.metadata import catch_up, labels_of
from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.outputs import StageInputs
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.indexing import (
    BatchIndexer,
    RememberedChildren,
    child_pages,
    move_dense,
    remembered_pages,
)
from ragline.application.pipeline.stages.needs import HasVectors, TemplateNeeds
from ragline.application.ports.embedder import Embedder, EmbeddingDimensionMismatch
from ragline.application.ports.embedder_resolver import EmbedderResolver, UnusableEmbeddingConfig
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.vector_index import ChunkPayload, DensePoint
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import FailureCode, Stage


def chunk_payload(chunk: ChunkRecord, metadata: DocumentMetadata) -> ChunkPayload:
    """What a vector point carries: tenant scope, document, parent, where it came from and
    the document's metadata (what search filters on)."""
    scope = chunk.scope
    return ChunkPayload(
        user_id=scope.user_id,
        dataset_id=scope.dataset_id,
        doc_id=scope.doc_id,
        parent_id=chunk.parent_id,
        extra={"task_id": chunk.task_id, "canonical_path": chunk.canonical_path},
        metadata=metadata,
    )


def _dimension_code(error: Exception) -> FailureCode:
    if isinstance(error, EmbeddingDimensionMismatch):
        return FailureCode.EMBEDDING_DIMENSION_UNSUPPORTED
    return FailureCode.VECTORIZING_FAILED


class VectorizingNeeds(TemplateNeeds, HasVectors, Protocol):
    """VECTORIZING resolves the user's embedder and writes dense points."""

    @property
    def embedders(self) -> EmbedderResolver: ...


class VectorizingStage(PipelineStage[RememberedChildren | None]):
    stage: ClassVar[Stage] = Stage.VECTORIZING
    gives: ClassVar[type | None] = RememberedChildren

    def __init__(self, services: VectorizingNeeds) -> None:
        super().__init__(services)
        self.services: VectorizingNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> RememberedChildren | None:
        embedder = await self._embedder(ctx)
        indexer = BatchIndexer(
            self.services,
            ctx.scope,
            move_dense,
            lambda c: c.dense_status,
            FailureCode.VECTORIZING_FAILED,
        )

        headers, filename = self.services.settings.contextual_headers, ctx.task.source_filename
        labels = await labels_of(self.services.uow, ctx.scope)

        async def embed_and_upsert(batch: Sequence[ChunkRecord]) -> None:
            started = time.perf_counter()
            texts = [indexed_text(c, filename, headers) for c in batch]
            vectors = await asyncio.to_thread(embedder.embed_documents, texts)
            self.services.metrics.texts_embedded(len(batch), time.perf_counter() - started)
            if len(vectors) != len(batch):
                raise StageFailure(
                    FailureCode.VECTORIZING_FAILED,
                    f"embedder returned {len(vectors)} vectors for {len(batch)} texts",
                )
            for vector in vectors:
                if len(vector) != embedder.dimension:
                    raise EmbeddingDimensionMismatch(embedder.dimension, len(vector), "output")
            await self.services.vectors.upsert_dense(
                [
                    DensePoint(c.chunk_id, v, chunk_payload(c, labels.metadata))
                    for c, v in zip(batch, vectors, strict=True)
                ]
            )

        kept = RememberedChildren()
        seen, _ = await indexer.run(
            remembered_pages(child_pages(self.services, ctx.scope, ctx.task_id), kept),
            self.services.settings.embed_batch_size,
            embed_and_upsert,
            _dimension_code,
        )
        if not seen:
            raise StageFailure(FailureCode.VECTORIZING_FAILED, "the document has no chunks")
        await self._catch_up(ctx, labels)
        return kept if kept.children is not None else None

    async def _catch_up(self, ctx: RunContext, labels: StoredMetadata) -> None:
        scope, vectors = ctx.scope, self.services.vectors

        async def relabel(metadata: DocumentMetadata) -> None:
            await vectors.relabel_document(scope.user_id, scope.dataset_id, scope.doc_id, metadata)

        try:
            await catch_up(self.services.uow, scope, labels, relabel)
        except Exception as error:
            raise StageFailure(FailureCode.VECTORIZING_FAILED, describe(error)) from error

    async def _embedder(self, ctx: RunContext) -> Embedder:
        """Resolve and check the user's embedder before any chunk status moves."""
        user_id = ctx.scope.user_id
        async with self.services.uow() as uow:
            config = await uow.model_configs.default_embedding(user_id)
        if config is None:
            raise StageFailure(FailureCode.LLM_CONFIG_MISSING, _no_config(user_id))
        try:
            embedder = await self.services.embedders.resolve(config)
        except UnusableEmbeddingConfig as error:
            raise StageFailure(FailureCode.LLM_CONFIG_MISSING, describe(error)) from error
        if embedder.dimension != config.dimension:
            raise StageFailure(
                FailureCode.EMBEDDING_DIMENSION_UNSUPPORTED,
                f"model {config.model} gives {embedder.dimension} dimensions, "
                f"config says {config.dimension}",
            )
        try:
            await self.services.vectors.ensure_collection(embedder.dimension)
        except EmbeddingDimensionMismatch as error:
            raise StageFailure(
                FailureCode.EMBEDDING_DIMENSION_UNSUPPORTED, describe(error)
            ) from error
        return embedder


def _no_config(user_id: str) -> str:
    return (
        f"user {user_id} has no default EMBEDDING config: set one with "
        f"PUT /api/v1/users/{user_id}/model-configs/embedding or "
        f"`ragline models set-embedding --user {user_id}` (a worker never provisions one)"
    )
