"""SPARSE_VECTORIZING: sparse vectors for child chunks dense=SUCCESS and sparse != SUCCESS
(stage 6 of docs/design/0001-pipeline-contract.md). It re-reads the chunks (statuses moved since
CHUNKING); the tokens come from this run's PRETOKENIZE when it kept them (a one-page document), else
the encoder tokenizes. Its success, or its inherited skip, is what makes the run SUCCESS."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import ClassVar, Protocol

from ragline.application.error_text import StageFailure, describe
from ragline.application.metadata import catch_up, labels_of
from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.outputs import StageInputs, Takes
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.indexing import (
    BatchIndexer,
    child_pages,
    move_sparse,
)
from ragline.application.pipeline.stages.needs import HasVectors, TemplateNeeds
from ragline.application.pipeline.stages.pretokenize import TokenizedChildren
from ragline.application.pipeline.stages.vectorizing import chunk_payload
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.vector_index import SparsePoint
from ragline.application.search.spaces import dense_indexes
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import ChunkIndexStatus, FailureCode, Stage


def _sparse_code(_: Exception) -> FailureCode:
    return FailureCode.SPARSE_VECTORIZING_FAILED


class SparseVectorizingNeeds(TemplateNeeds, HasVectors, Protocol):
    """SPARSE_VECTORIZING encodes the children and writes sparse points."""

    @property
    def sparse(self) -> SparseEncoder: ...


class SparseVectorizingStage(PipelineStage[None]):
    stage: ClassVar[Stage] = Stage.SPARSE_VECTORIZING
    takes: ClassVar[tuple[Takes, ...]] = (
        Takes(TokenizedChildren, "the encoder tokenizes each child itself"),
    )

    def __init__(self, services: SparseVectorizingNeeds) -> None:
        super().__init__(services)
        self.services: SparseVectorizingNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> None:
        services, scope = self.services, ctx.scope

        async def dense_done_pages() -> AsyncIterator[list[ChunkRecord]]:
            async for page in child_pages(services, scope, ctx.task_id):
                not_dense = sum(c.dense_status is not ChunkIndexStatus.SUCCESS for c in page)
                if not_dense:
                    raise StageFailure(
                        FailureCode.SPARSE_VECTORIZING_FAILED,
                        f"{not_dense} chunks lack a dense vector",
                    )
                yield page

        encoder, vectors = self.services.sparse, self.services.vectors

        tokenized = inputs.take(TokenizedChildren)
        known = tokenized.tokens if tokenized is not None else None
        headers, filename = services.settings.contextual_headers, ctx.task.source_filename
        labels = await labels_of(services.uow, scope, ctx.labels)

        async def encode_and_upsert(batch: Sequence[ChunkRecord]) -> None:
            if known is not None and all(c.chunk_id in known for c in batch):
                token_lists = [known[c.chunk_id] for c in batch]
                sparse = await asyncio.to_thread(encoder.encode_token_lists, token_lists)
            else:
                texts = [indexed_text(c, filename, headers) for c in batch]
                sparse = await asyncio.to_thread(encoder.encode_documents, texts)
            if len(sparse) != len(batch):
                raise StageFailure(
                    FailureCode.SPARSE_VECTORIZING_FAILED,
                    f"encoder returned {len(sparse)} vectors for {len(batch)} texts",
                )
            await vectors.upsert_sparse(
                [
                    SparsePoint(c.chunk_id, s, chunk_payload(c, labels.metadata))
                    for c, s in zip(batch, sparse, strict=True)
                ]
            )

        indexer = BatchIndexer(
            self.services,
            ctx.scope,
            move_sparse,
            lambda c: c.sparse_status,
            FailureCode.SPARSE_VECTORIZING_FAILED,
        )
        seen, _ = await indexer.run(
            dense_done_pages(), services.settings.sparse_batch_size, encode_and_upsert, _sparse_code
        )
        if not seen:
            raise StageFailure(FailureCode.SPARSE_VECTORIZING_FAILED, "the document has no chunks")

        async def relabel(metadata: DocumentMetadata) -> None:
            # every index holding the document's points: its dense ones may be elsewhere
            args = (scope.user_id, scope.dataset_id, scope.doc_id, metadata)
            for index in await dense_indexes(services.uow, vectors, scope.user_id):
                await index.relabel_document(*args)

        try:
            ctx.labels = await catch_up(services.uow, scope, labels, relabel)
        except Exception as error:
            raise StageFailure(FailureCode.SPARSE_VECTORIZING_FAILED, describe(error)) from error
        return None
