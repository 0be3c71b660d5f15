"""PRETOKENIZE: an in-memory keyword plan, tokens per child chunk (SPEC §3 stage 4).

All-or-nothing per file and it writes nothing: the plan lives in the run context and is
consumed by KEYWORD_INDEXING, which rebuilds it when this stage was inherited. The children
are read page by page and every distinct token string is kept once (a document repeats its
vocabulary), so the plan costs a pointer per token rather than a string per token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.indexing import child_pages
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.unit_of_work import ChunkRecord
from ragline.domain.parse_run import FailureCode, Stage


def _plan(
    tokenizer: Tokenizer, children: Sequence[ChunkRecord], vocabulary: dict[str, str]
) -> list[KeywordDoc]:
    return [
        KeywordDoc(
            chunk_id=chunk.chunk_id,
            doc_id=chunk.scope.doc_id,
            user_id=chunk.scope.user_id,
            dataset_id=chunk.scope.dataset_id,
            parent_id=chunk.parent_id,
            tokens=tuple(vocabulary.setdefault(t, t) for t in tokenizer.tokenize(chunk.text)),
            payload={"canonical_path": chunk.canonical_path, "task_id": chunk.task_id},
        )
        for chunk in children
    ]


async def build_keyword_plan(services: StageServices, ctx: RunContext) -> list[KeywordDoc]:
    """Tokens for every child of the document, or PRETOKENIZE_FAILED (nothing kept)."""
    plan: list[KeywordDoc] = []
    vocabulary: dict[str, str] = {}
    try:
        async for page in child_pages(services, ctx.scope):
            plan.extend(await asyncio.to_thread(_plan, services.tokenizer, page, vocabulary))
    except Exception as error:
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, describe(error)) from error
    if not plan:
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, "no child chunks to tokenize")
    return plan


class PretokenizeStage(PipelineStage):
    stage: ClassVar[Stage] = Stage.PRETOKENIZE
    failure_code: ClassVar[FailureCode] = FailureCode.PRETOKENIZE_FAILED

    async def run(self, ctx: RunContext) -> None:
        ctx.keyword_plan = await build_keyword_plan(self.services, ctx)
        return None
