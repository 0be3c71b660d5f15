"""PreviewChunks: how a text or a file of any supported format would be cut, before indexing
(`ragline chunk`, `POST /api/v1/chunks/preview`). Nothing is stored."""

from __future__ import annotations

import asyncio
from typing import Any

from ragline.application.chunking.chunk_document import ChunkDocument
from ragline.application.debug.extract import ExtractionFailed, ExtractMarkdown
from ragline.domain.chunking import ChunkingResult
from ragline.domain.parse_run import FailureCode

TEXT_TYPES = frozenset({"md", "markdown", "txt", "text"})


def preview_json(result: ChunkingResult) -> dict[str, Any]:
    """The preview object: {"markdown", "parents": [{"text", "span": [start, end],
    "section_path", "source_type", "children": [{"text", "span", "source_type"}]}]}, spans
    being offsets into "markdown"."""
    return {
        "markdown": result.markdown,
        "parents": [
            {
                "text": p.text,
                "span": [p.start, p.end],
                "section_path": list(p.section_path),
                "source_type": str(p.source_type),
                "children": [
                    {"text": c.text, "span": [c.start, c.end], "source_type": str(c.source_type)}
                    for c in p.children
                ],
            }
            for p in result.parents
        ],
    }


class PreviewChunks:
    def __init__(self, chunk_document: ChunkDocument, extract: ExtractMarkdown) -> None:
        self.chunk_document = chunk_document
        self._extract = extract

    def text(self, markdown: str, plan: str = "default") -> ChunkingResult:
        """UnknownPlanError for a plan that does not exist."""
        return self.chunk_document(markdown, self.chunk_document.plan(plan))

    async def file(self, data: bytes, file_type: str, plan: str = "default") -> ChunkingResult:
        """A file as the pipeline would cut it: text as is, other formats parsed first
        (ExtractionFailed when they cannot be). The cut runs off the event loop."""
        chosen = self.chunk_document.plan(plan)
        kind = file_type.strip().lower().lstrip(".")
        if kind in TEXT_TYPES:
            try:
                markdown = data.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                raise ExtractionFailed(
                    FailureCode.PARSE_ENGINE_FAILED, f"not UTF-8 text: {error}"
                ) from None
        else:
            markdown = (await self._extract.from_bytes(data, kind)).markdown
        return await asyncio.to_thread(self.chunk_document, markdown, chosen)
