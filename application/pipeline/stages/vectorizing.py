"""VECTORIZING: dense vectors for every child chunk not yet dense SUCCESS (stage 3 of
docs/design/0001-pipeline-contract.md).

The embedder comes from the user's default EMBEDDING config: missing -> LLM_CONFIG_MISSING
before any chunk status changes (no system fallback: docs/design/0001-pipeline-contract.md; the
reason says how to set one); a model whose output dimension differs from the config or
the collection -> EMBEDDING_DIMENSION_UNSUPPORTED.

The vectors go into the user's active embedding generation (issue 21, `search.spaces`): the
space search reads, with the model search embeds queries with. A re-embedding's copy catches
a run that lands during it up (its range re-read before READY and before the swap). A run
that embedded with the old model while the swap committed re-embeds its children with the
new one into the new space before the stage ends (docs/state-machine.md says what is left).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import ClassVar, Protocol

import attrs

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
from ragline.application.ports.vector_index import ChunkPayload, DensePoint, VectorIndex
from ragline.application.search.spaces import active_model, dense_indexes, index_of, spaces_of
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import ChunkIndexStatus, FailureCode, Stage

FOLLOW_SWAPS = 3
"""Times a run re-embeds into a generation swapped in while it embedded (one is the rule)."""


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


@attrs.frozen
class _Target:
    """Where this run's vectors go: the active generation's index and its model."""

    embedder: Embedder
    index: VectorIndex
    generation: int


class VectorizingStage(PipelineStage[RememberedChildren | None]):
    stage: ClassVar[Stage] = Stage.VECTORIZING
    gives: ClassVar[type | None] = RememberedChildren

    def __init__(self, services: VectorizingNeeds) -> None:
        super().__init__(services)
        self.services: VectorizingNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> RememberedChildren | None:
        await self._count_start(ctx.scope.user_id)
        target = await self._target(ctx)
        embedder = target.embedder
        indexer = BatchIndexer(
            self.services,
            ctx.scope,
            move_dense,
            lambda c: c.dense_status,
            FailureCode.VECTORIZING_FAILED,
        )

        headers, filename = self.services.settings.contextual_headers, ctx.task.source_filename
        labels = await labels_of(self.services.uow, ctx.scope, ctx.labels)

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
            await target.index.upsert_dense(
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
        target = await self._follow_swaps(ctx, target, labels)
        await self._catch_up(ctx, labels, target.index)
        return kept if kept.children is not None else None

    async def _follow_swaps(
        self, ctx: RunContext, target: _Target, labels: StoredMetadata
    ) -> _Target:
        """A swap committed while this run embedded with the old model: its children go
        into the new generation too, with the new model, before the stage ends."""
        for _ in range(FOLLOW_SWAPS):
            now = await self._target(ctx)
            if now.generation == target.generation:
                return target
            target = now
            headers, filename = self.services.settings.contextual_headers, ctx.task.source_filename
            async for page in child_pages(self.services, ctx.scope, ctx.task_id):
                done = [c for c in page if c.dense_status is ChunkIndexStatus.SUCCESS]
                size = self.services.settings.embed_batch_size
                for start in range(0, len(done), size):
                    batch = done[start : start + size]
                    texts = [indexed_text(c, filename, headers) for c in batch]
                    vectors = await asyncio.to_thread(target.embedder.embed_documents, texts)
                    await target.index.upsert_dense(
                        [
                            DensePoint(c.chunk_id, v, chunk_payload(c, labels.metadata))
                            for c, v in zip(batch, vectors, strict=True)
                        ]
                    )
        raise StageFailure(
            FailureCode.VECTORIZING_FAILED,
            f"the embedding generation of user {ctx.scope.user_id} kept changing",
        )

    async def _catch_up(self, ctx: RunContext, labels: StoredMetadata, index: VectorIndex) -> None:
        scope, services = ctx.scope, self.services

        async def relabel(metadata: DocumentMetadata) -> None:
            # the run's own index, and every other one holding the document's points
            found = await dense_indexes(services.uow, services.vectors, scope.user_id)
            for each in [index, *(i for i in found if i is not index)]:
                await each.relabel_document(scope.user_id, scope.dataset_id, scope.doc_id, metadata)

        try:
            ctx.labels = await catch_up(self.services.uow, scope, labels, relabel)
        except Exception as error:
            raise StageFailure(FailureCode.VECTORIZING_FAILED, describe(error)) from error

    async def _count_start(self, user_id: str) -> None:
        """While the user has a shadow, count this start (committed after the stage's
        PROCESSING, before its target is read): a swap that read the count earlier cannot
        commit, and one that commits first is what `_target` then reads. Without a shadow
        nothing is written: a later plan's swap sees this run in the user's runs."""
        async with self.services.uow() as uow:
            if (await uow.reembeddings.generations(user_id)).shadow is None:
                return
            await uow.reembeddings.note_vectorizing(user_id)
            await uow.commit()

    async def _target(self, ctx: RunContext) -> _Target:
        """Resolve and check the user's embedder and the index of their active generation
        before any chunk status moves."""
        user_id = ctx.scope.user_id
        async with self.services.uow() as uow:
            config, generation = await active_model(uow, user_id)
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
        vectors = self.services.vectors
        try:
            if generation == 0:
                await vectors.ensure_collection(embedder.dimension)
            index = await index_of(vectors, spaces_of(vectors), generation, embedder.dimension)
        except EmbeddingDimensionMismatch as error:
            raise StageFailure(
                FailureCode.EMBEDDING_DIMENSION_UNSUPPORTED, describe(error)
            ) from error
        return _Target(embedder, index, generation)


def _no_config(user_id: str) -> str:
    return (
        f"user {user_id} has no default EMBEDDING config: set one with "
        f"PUT /api/v1/users/{user_id}/model-configs/embedding or "
        f"`ragline models set-embedding --user {user_id}` (a worker never provisions one)"
    )
