"""PRETOKENIZE: an in-memory keyword plan, tokens per child chunk (SPEC §3 stage 4).

All-or-nothing per file and it writes nothing: the plan lives in the run context and is
consumed by KEYWORD_INDEXING, which rebuilds it when this stage was inherited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.unit_of_work import ChunkRecord
from ragline.domain.parse_run import FailureCode, Stage


def _plan(tokenizer: Tokenizer, children: Sequence[ChunkRecord]) -> list[KeywordDoc]:
    return [
        KeywordDoc(
            chunk_id=chunk.chunk_id,
            doc_id=chunk.scope.doc_id,
            user_id=chunk.scope.user_id,
            dataset_id=chunk.scope.dataset_id,
            parent_id=chunk.parent_id,
            tokens=tokenizer.tokenize(chunk.text),
            payload={"canonical_path": chunk.canonical_path, "task_id": chunk.task_id},
        )
        for chunk in children
    ]


async def build_keyword_plan(tokenizer: Tokenizer, ctx: RunContext) -> list[KeywordDoc]:
    """Tokens for every child of the document, or PRETOKENIZE_FAILED (nothing kept)."""
    children = ctx.children()
    if not children:
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, "no child chunks to tokenize")
    try:
        return await asyncio.to_thread(_plan, tokenizer, children)
    except Exception as error:
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, describe(error)) from error


class PretokenizeStage(PipelineStage):
    stage: ClassVar[Stage] = Stage.PRETOKENIZE
    failure_code: ClassVar[FailureCode] = FailureCode.PRETOKENIZE_FAILED

    async def run(self, ctx: RunContext) -> None:
        ctx.keyword_plan = await build_keyword_plan(self.services.tokenizer, ctx)
        return None
