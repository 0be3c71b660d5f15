"""KEYWORD_INDEXING: a full rebuild of the document in the keyword index (stage 5 of
docs/design/0001-pipeline-contract.md).

Delete the document's docs, then write the plan batch by batch; a failed write is cleaned up
(best effort) so no half-written document stays searchable. Rebuilds the plan first when
PRETOKENIZE was inherited.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import ClassVar

from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.keyword_plan import KeywordPlan
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.pretokenize import build_keyword_plan
from ragline.application.ports.keyword_index import KeywordIndexUnavailable
from ragline.domain.parse_run import FailureCode, Stage

WRITE_BATCH = 5000  # docs per index write (each write commits)


class KeywordIndexingStage(PipelineStage):
    stage: ClassVar[Stage] = Stage.KEYWORD_INDEXING
    failure_code: ClassVar[FailureCode] = FailureCode.KEYWORD_INDEXING_FAILED

    async def run(self, ctx: RunContext) -> None:
        plan = ctx.keyword_plan
        if plan is None:
            try:
                plan = await build_keyword_plan(self.services, ctx)
            except StageFailure as failure:
                raise StageFailure(
                    FailureCode.KEYWORD_INDEXING_FAILED, f"rebuilding the plan: {failure.detail}"
                ) from failure
        try:
            await self._rebuild(ctx, plan)
        finally:
            ctx.discard_keyword_plan()
        return None

    async def _rebuild(self, ctx: RunContext, plan: KeywordPlan) -> None:
        index, scope = self.services.keywords, ctx.scope
        try:
            await index.delete_document(scope.user_id, scope.dataset_id, scope.doc_id)
        except Exception as error:
            raise StageFailure(FailureCode.KEYWORD_DELETE_FAILED, describe(error)) from error
        batches = plan.batches(WRITE_BATCH)
        try:
            while batch := await asyncio.to_thread(next, batches, None):
                await index.write(batch)
        except Exception as error:
            code = (
                FailureCode.KEYWORD_INDEX_UNAVAILABLE
                if isinstance(error, KeywordIndexUnavailable)
                else FailureCode.KEYWORD_INDEXING_FAILED
            )
            with contextlib.suppress(Exception):
                await index.delete_document(scope.user_id, scope.dataset_id, scope.doc_id)
            raise StageFailure(code, describe(error)) from error
        finally:
            batches.close()  # the spool file is closed before it is discarded
