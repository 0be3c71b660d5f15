"""What CHUNKING needs from the chunking use case: Markdown in, parent blocks out.

`ragline.application.chunking.ChunkDocument` fits (`chunker(markdown)` uses its default
plan); `PlanChunker` is the structure-free fallback for tests and tiny setups.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ragline.domain.chunking import DEFAULT_PLAN, ChunkingResult, ChunkPlan, chunk_document

MarkdownChunker = Callable[[str], ChunkingResult]
"""CPU-bound and synchronous: the stage runs it off the event loop."""


@attrs.frozen
class PlanChunker:
    """`chunk_document` with one plan and no structure tree (pipelines on the full text)."""

    plan: ChunkPlan = DEFAULT_PLAN

    def __call__(self, markdown: str) -> ChunkingResult:
        return chunk_document(markdown, self.plan)
