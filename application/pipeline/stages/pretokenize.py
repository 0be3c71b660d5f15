"""PRETOKENIZE: the keyword plan, tokens per child chunk (SPEC §3 stage 4).

All-or-nothing per file and it writes nothing to the stores: the plan is spooled to the
task's workspace file (see keyword_plan) and consumed by KEYWORD_INDEXING, which rebuilds it
when this stage was inherited. Children are read page by page, so memory stays flat however
large the document; a document of one page reuses the page VECTORIZING read in this run and
leaves its tokens to SPARSE_VECTORIZING.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.keyword_plan import SUFFIX, KeywordPlan
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.indexing import child_pages
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.tokenizer import Tokenizer
from ragline.domain.parse_run import FailureCode, Stage


def _plan(
    tokenizer: Tokenizer, children: Sequence[ChunkRecord], filename: str, headers: bool
) -> list[KeywordDoc]:
    return [
        KeywordDoc(
            chunk_id=chunk.chunk_id,
            doc_id=chunk.scope.doc_id,
            user_id=chunk.scope.user_id,
            dataset_id=chunk.scope.dataset_id,
            parent_id=chunk.parent_id,
            tokens=tokenizer.tokenize(indexed_text(chunk, filename, headers)),
            payload={"canonical_path": chunk.canonical_path, "task_id": chunk.task_id},
        )
        for chunk in children
    ]


async def build_keyword_plan(services: StageServices, ctx: RunContext) -> KeywordPlan:
    """Tokens for every child of the document, or PRETOKENIZE_FAILED (nothing kept)."""
    ctx.discard_keyword_plan()
    plan = KeywordPlan(services.workspace.path_for(ctx.task_id, SUFFIX))
    known, ctx.children = ctx.children, None
    tokens: dict[str, list[str]] | None = None
    headers, filename = services.settings.contextual_headers, ctx.task.source_filename
    try:
        if known is not None:  # the one page VECTORIZING read in this run
            docs = await asyncio.to_thread(_plan, services.tokenizer, known, filename, headers)
            tokens = {doc.chunk_id: list(doc.tokens) for doc in docs}
            await asyncio.to_thread(plan.add, docs)
        else:
            async for page in child_pages(services, ctx.scope):
                docs = await asyncio.to_thread(_plan, services.tokenizer, page, filename, headers)
                await asyncio.to_thread(plan.add, docs)
        await asyncio.to_thread(plan.seal)
    except Exception as error:
        plan.discard()
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, describe(error)) from error
    if not plan.count:
        plan.discard()
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, "no child chunks to tokenize")
    ctx.keyword_plan = plan
    ctx.child_tokens = tokens  # for SPARSE_VECTORIZING, which uses the same tokenizer
    return plan


class PretokenizeStage(PipelineStage):
    stage: ClassVar[Stage] = Stage.PRETOKENIZE
    failure_code: ClassVar[FailureCode] = FailureCode.PRETOKENIZE_FAILED

    async def run(self, ctx: RunContext) -> None:
        await build_keyword_plan(self.services, ctx)
        return None
