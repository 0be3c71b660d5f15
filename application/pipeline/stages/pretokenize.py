"""PRETOKENIZE: the keyword plan, tokens per child chunk (stage 4 of
docs/design/0001-pipeline-contract.md).

All-or-nothing per file and it writes nothing to the stores: the plan is spooled to the
task's workspace file (see keyword_plan) and consumed by KEYWORD_INDEXING, which rebuilds it
when this stage was inherited. Children are read page by page, so memory stays flat however
large the document; a document of one page reuses the page VECTORIZING read in this run and
leaves its tokens to SPARSE_VECTORIZING.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar, Protocol

import attrs

from ragline.application.error_text import StageFailure, describe
from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.context import RunContext
from ragline.application.pipeline.keyword_plan import SUFFIX, KeywordPlan
from ragline.application.pipeline.outputs import StageInputs, Takes
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.indexing import RememberedChildren, child_pages
from ragline.application.pipeline.stages.needs import HasTokenizer, TemplateNeeds
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.tokenizer import Tokenizer
from ragline.domain.parse_run import FailureCode, Stage


def keyword_docs(
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


@attrs.define
class TokenizedChildren:
    """PRETOKENIZE's output: the keyword plan spooled to the task's workspace file, and,
    for a document of one page, each child's tokens (SPARSE_VECTORIZING uses the same
    tokenizer). Discarded, spool file included, whenever the run ends."""

    plan: KeywordPlan
    tokens: dict[str, list[str]] | None = None

    def discard(self) -> None:
        self.plan.discard()


async def build_keyword_plan(
    services: HasTokenizer,
    task_id: str,
    scope: DocumentScope,
    filename: str,
    known: list[ChunkRecord] | None = None,
) -> TokenizedChildren:
    """Tokens for every child of the document (`known`: the one page VECTORIZING read in
    this run; otherwise they are read page by page), or PRETOKENIZE_FAILED (nothing kept)."""
    plan = KeywordPlan(services.workspace.path_for(task_id, SUFFIX))
    tokens: dict[str, list[str]] | None = None
    headers = services.settings.contextual_headers
    try:
        if known is not None:
            docs = await asyncio.to_thread(
                keyword_docs, services.tokenizer, known, filename, headers
            )
            tokens = {doc.chunk_id: list(doc.tokens) for doc in docs}
            await asyncio.to_thread(plan.add, docs)
        else:
            async for page in child_pages(services, scope, task_id):
                docs = await asyncio.to_thread(
                    keyword_docs, services.tokenizer, page, filename, headers
                )
                await asyncio.to_thread(plan.add, docs)
        await asyncio.to_thread(plan.seal)
    except Exception as error:
        plan.discard()
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, describe(error)) from error
    if not plan.count:
        plan.discard()
        raise StageFailure(FailureCode.PRETOKENIZE_FAILED, "no child chunks to tokenize")
    return TokenizedChildren(plan, tokens)


class PretokenizeNeeds(TemplateNeeds, HasTokenizer, Protocol):
    """PRETOKENIZE uses the tokenizer, the stored children and the workspace (the spool)."""


class PretokenizeStage(PipelineStage[TokenizedChildren]):
    stage: ClassVar[Stage] = Stage.PRETOKENIZE
    gives: ClassVar[type | None] = TokenizedChildren
    takes: ClassVar[tuple[Takes, ...]] = (
        Takes(RememberedChildren, "reads the stored children page by page"),
    )

    def __init__(self, services: PretokenizeNeeds) -> None:
        super().__init__(services)
        self.services: PretokenizeNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> TokenizedChildren:
        remembered = inputs.take(RememberedChildren)
        known = remembered.children if remembered is not None else None
        return await build_keyword_plan(
            self.services, ctx.task_id, ctx.scope, ctx.task.source_filename, known
        )
