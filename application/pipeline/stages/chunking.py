"""CHUNKING: Markdown -> parent/child chunk truth rows, persisted in one transaction
(stage 2 of docs/design/0001-pipeline-contract.md, invariant 7 of
docs/design/0002-run-state-machine.md).

The Markdown comes from this run's CLEANING, or is re-read from the stored coordinates when
CLEANING was inherited. Later stages read the stored rows page by page, inherited or not.

The rows are the run's lineage (its task id, also in every chunk id), written beside the
document's live lineage and not live: the old version keeps answering until this run's
SUCCESS swaps them (stages/base.py). Only this lineage's rows and vectors are replaced (a
resumed run re-does its own); every child starts PENDING, so dense and sparse write them.
A retry that inherited CHUNKING adopts the lineage of the run it retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import ClassVar, Protocol

from ragline.application.error_text import StageFailure, describe
from ragline.application.pipeline.chunker import MarkdownChunker
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.outputs import StageInputs, Takes
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.cleaning import CleanedMarkdown
from ragline.application.pipeline.stages.markdown_io import read_markdown
from ragline.application.pipeline.stages.needs import HasObjects, HasVectors, TemplateNeeds
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.search.spaces import dense_indexes
from ragline.domain.chunking import ChunkCandidate, ChunkingResult, ParentBlock, chunk_id
from ragline.domain.parse_run import ChunkIndexStatus, FailureCode, Stage


def document_key(scope: DocumentScope, lineage: str) -> str:
    """What chunk ids are derived from besides span and text: tenant + document + lineage
    (two versions of a document never share a chunk id)."""
    return f"{scope.user_id}/{scope.dataset_id}/{scope.doc_id}@{lineage}"


def chunk_records(
    scope: DocumentScope, task_id: str, result: ChunkingResult
) -> Iterator[ChunkRecord]:
    """Truth rows in order: each parent followed by its children. Ids are deterministic; a
    parent and its only child may share span and text, so the role is part of the id.
    A generator: the store consumes it in batches, so a child's text (a view on its parent
    until read) is materialised only while its batch is written."""
    key = document_key(scope, task_id)
    order = 0
    for parent in result.parents:
        parent_id = chunk_id(f"{key}#parent", parent.span, parent.text)
        yield _record(parent, parent_id, None, scope, task_id, order)
        order += 1
        for child in parent.children:
            child_id = chunk_id(f"{key}#child", child.span, child.text)
            yield _record(child, child_id, parent_id, scope, task_id, order)
            order += 1


def _record(
    candidate: ParentBlock | ChunkCandidate,
    record_id: str,
    parent_id: str | None,
    scope: DocumentScope,
    task_id: str,
    order_index: int,
) -> ChunkRecord:
    """One truth row; only children are indexed, so only they carry index statuses."""
    status = ChunkIndexStatus.PENDING if parent_id is not None else None
    return ChunkRecord(
        chunk_id=record_id,
        scope=scope,
        task_id=task_id,
        parent_id=parent_id,
        order_index=order_index,
        text=candidate.text,
        section_path=candidate.section_path,
        canonical_path=candidate.canonical_path,
        structure_node_id=candidate.structure_node_id,
        node_type=candidate.node_type.value if candidate.node_type else None,
        source_type=candidate.source_type.value,
        span_start=candidate.start,
        span_end=candidate.end,
        dense_status=status,
        sparse_status=status,
        live=False,  # until the run's SUCCESS swaps its lineage in
    )


class ChunkingNeeds(TemplateNeeds, HasObjects, HasVectors, Protocol):
    """CHUNKING cuts the Markdown, stores its lineage's rows, deletes that lineage's old
    vectors."""

    @property
    def chunker(self) -> MarkdownChunker: ...


class ChunkingStage(PipelineStage[None]):
    stage: ClassVar[Stage] = Stage.CHUNKING
    takes: ClassVar[tuple[Takes, ...]] = (
        Takes(CleanedMarkdown, "re-reads the Markdown from the run's stored coordinates"),
    )

    def __init__(self, services: ChunkingNeeds) -> None:
        super().__init__(services)
        self.services: ChunkingNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> None:
        cleaned = inputs.take(CleanedMarkdown)  # taken: not held for the later stages
        markdown = cleaned.text if cleaned is not None else await self._stored_markdown(ctx)
        del cleaned
        try:
            result = await asyncio.to_thread(self.services.chunker, markdown)
        except Exception as error:
            raise StageFailure(FailureCode.CHUNKING_FAILED, describe(error)) from error
        if not result.child_count:
            raise StageFailure(FailureCode.CHUNKING_FAILED, "the document produced no chunks")
        records = chunk_records(ctx.scope, ctx.task_id, result)
        async with self.services.uow() as uow:
            stale = await uow.chunks.replace_lineage(ctx.scope, ctx.task_id, records)
            await uow.commit()
        del records, result, markdown  # later stages page through the stored rows
        if stale:  # a resumed run's own earlier vectors; the live lineage's stay
            scope = ctx.scope
            services = self.services
            for index in await dense_indexes(services.uow, services.vectors, scope.user_id):
                await index.delete_chunks(scope.user_id, scope.dataset_id, stale)
        return None

    async def on_skip(self, ctx: RunContext) -> None:
        """A retry continues the lineage of the run it retries (whose CHUNKING it inherits),
        so the later stages page through the same rows under this run's task id."""
        retried = ctx.run.retry_of_task_id
        if retried is None:
            return
        async with self.services.uow() as uow:
            await uow.chunks.adopt_lineage(ctx.scope, retried, ctx.task_id)
            await uow.commit()

    async def _stored_markdown(self, ctx: RunContext) -> str:
        location = ctx.run.markdown
        if location is None:
            raise StageFailure(
                FailureCode.CHUNKING_FAILED, "no Markdown from CLEANING and no stored coordinates"
            )
        return await read_markdown(
            self.services,
            ctx.task_id,
            location.bucket,
            location.object_key,
            FailureCode.CHUNKING_FAILED,
        )
