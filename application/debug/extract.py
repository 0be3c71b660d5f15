"""ExtractMarkdown: one file to Markdown, synchronously, for integration testing
(docs/design/0005-wire-contract.md `extract_sync`). The same parser and limits as CLEANING
(sandboxed, bounded in time, memory and output); nothing is stored and no run is recorded. An object
is read only if the caller may name it (ReferencePolicy: a tenant its own `<user_id>/` keys of the
tenant buckets).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import attrs

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.ports.object_storage import ObjectNotFound, ObjectStorage
from ragline.application.ports.parser import (
    SUPPORTED_FILE_TYPES,
    ParseError,
    ParseLimits,
    ParseOptions,
    Parser,
    PdfParserBackend,
    tier_of,
)
from ragline.application.workspace import Workspace
from ragline.domain.parse_run import FailureCode


class ExtractionFailed(Exception):
    """The file could not become Markdown; `code` is the failure code a run would record."""

    def __init__(self, code: FailureCode, reason: str) -> None:
        super().__init__(f"{code.value}: {reason}")
        self.code = code
        self.reason = reason


@attrs.frozen
class ExtractedMarkdown:
    markdown: str
    title: str | None
    page_count: int | None
    warnings: tuple[str, ...]


class ExtractMarkdown:
    def __init__(
        self,
        parser: Parser,
        storage: ObjectStorage,
        workspace: Workspace,
        limits: ParseLimits,
        references: ReferencePolicy,
    ) -> None:
        self._references = references
        self._parser = parser
        self._storage = storage
        self._workspace = workspace
        self._limits = limits

    async def from_bytes(
        self, data: bytes, file_type: str, backend: PdfParserBackend = PdfParserBackend.AUTO
    ) -> ExtractedMarkdown:
        kind = _file_type(file_type)
        with self._workspace.temp_file(f"extract-{uuid.uuid4()}", kind) as path:
            await asyncio.to_thread(path.write_bytes, data)
            return await self._parse(path, kind, backend)

    async def from_object(
        self,
        caller: Caller,
        bucket: str,
        key: str,
        file_type: str,
        backend: PdfParserBackend = PdfParserBackend.AUTO,
    ) -> ExtractedMarkdown:
        """An object `caller` may read (ReferenceRefused otherwise, before it is read)."""
        self._references.check_read(caller, "source", bucket, key)
        kind = _file_type(file_type)
        with self._workspace.temp_file(f"extract-{uuid.uuid4()}", kind) as path:
            try:
                await self._storage.get_to_file(bucket, key, path)
            except ObjectNotFound as error:
                raise ExtractionFailed(
                    FailureCode.SOURCE_FILE_NOT_FOUND, f"{bucket}/{key}"
                ) from error
            return await self._parse(path, kind, backend)

    async def _parse(self, path: Path, kind: str, backend: PdfParserBackend) -> ExtractedMarkdown:
        if backend is PdfParserBackend.MINERU:
            raise ExtractionFailed(
                FailureCode.UNSUPPORTED_FILE_TYPE, "mineru is not available here"
            )
        options = ParseOptions(
            pdf_parser_backend=backend, limits=self._limits, tier=tier_of(backend)
        )
        try:
            document = await asyncio.to_thread(self._parser.parse, path, kind, options)
        except ParseError as error:
            raise ExtractionFailed(error.failure_code, error.reason) from error
        return ExtractedMarkdown(
            document.markdown, document.title, document.page_count, tuple(document.warnings)
        )


def _file_type(file_type: str) -> str:
    kind = file_type.strip().lower().lstrip(".")
    if kind not in SUPPORTED_FILE_TYPES:
        known = ", ".join(sorted(SUPPORTED_FILE_TYPES))
        raise ExtractionFailed(
            FailureCode.UNSUPPORTED_FILE_TYPE, f"{file_type!r} (supported: {known})"
        )
    return kind
