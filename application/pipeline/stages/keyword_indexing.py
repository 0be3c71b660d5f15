"""KEYWORD_INDEXING: the run's lineage written to the keyword index (stage 5 of
docs/design/0001-pipeline-contract.md).

Writes the plan batch by batch beside the document's live lineage (writes replace by chunk
id, so a resumed run re-does its own docs); the old lineage's docs go in one delete at the
run's SUCCESS (stages/base.py). A failed write removes what this attempt wrote (best effort;
search never answers from a lineage that is not live anyway). Rebuilds the plan first when
PRETOKENIZE was inherited.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import ClassVar, Protocol

import attrs

from ragline.application.error_text import StageFailure, describe
from ragline.application.metadata import catch_up, labels_of
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.keyword_plan import KeywordPlan
from ragline.application.pipeline.outputs import StageInputs, Takes
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.needs import HasTokenizer, TemplateNeeds
from ragline.application.pipeline.stages.pretokenize import (
    TokenizedChildren,
    build_keyword_plan,
)
from ragline.application.ports.keyword_index import KeywordIndex, KeywordIndexUnavailable
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import FailureCode, Stage

WRITE_BATCH = 5000  # docs per index write (each write commits)


class KeywordIndexingNeeds(TemplateNeeds, HasTokenizer, Protocol):
    """KEYWORD_INDEXING writes the keyword index (and may rebuild the plan first)."""

    @property
    def keywords(self) -> KeywordIndex: ...


class KeywordIndexingStage(PipelineStage[None]):
    stage: ClassVar[Stage] = Stage.KEYWORD_INDEXING
    takes: ClassVar[tuple[Takes, ...]] = (
        Takes(TokenizedChildren, "rebuilds the plan from the stored children"),
    )

    def __init__(self, services: KeywordIndexingNeeds) -> None:
        super().__init__(services)
        self.services: KeywordIndexingNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> None:
        tokenized = inputs.get(TokenizedChildren)  # its tokens stay for SPARSE_VECTORIZING
        if tokenized is None:
            try:
                tokenized = await build_keyword_plan(
                    self.services, ctx.task_id, ctx.scope, ctx.task.source_filename
                )
            except StageFailure as failure:
                raise StageFailure(
                    FailureCode.KEYWORD_INDEXING_FAILED, f"rebuilding the plan: {failure.detail}"
                ) from failure
        try:
            await self._rebuild(ctx, tokenized.plan)
        finally:
            tokenized.discard()  # the spool file goes as soon as it is written
        return None

    async def _rebuild(self, ctx: RunContext, plan: KeywordPlan) -> None:
        index, scope = self.services.keywords, ctx.scope
        labels = await labels_of(self.services.uow, scope, ctx.labels)
        batches = plan.batches(WRITE_BATCH)
        written: list[str] = []
        try:
            while batch := await asyncio.to_thread(next, batches, None):
                if labels.metadata:
                    batch = [attrs.evolve(doc, metadata=labels.metadata) for doc in batch]
                written.extend(doc.chunk_id for doc in batch)
                await index.write(batch)

            async def relabel(metadata: DocumentMetadata) -> None:
                await index.relabel_document(
                    scope.user_id, scope.dataset_id, scope.doc_id, metadata
                )

            ctx.labels = await catch_up(self.services.uow, scope, labels, relabel)
        except Exception as error:
            code = (
                FailureCode.KEYWORD_INDEX_UNAVAILABLE
                if isinstance(error, KeywordIndexUnavailable)
                else FailureCode.KEYWORD_INDEXING_FAILED
            )
            with contextlib.suppress(Exception):
                await index.delete_chunks(scope.user_id, scope.dataset_id, written)
            raise StageFailure(code, describe(error)) from error
        finally:
            batches.close()  # the spool file is closed before it is discarded
