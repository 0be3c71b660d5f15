"""CLEANING: source file -> Markdown in object storage (stage 1 of
docs/design/0001-pipeline-contract.md).

md/markdown is passed through (its coordinates are the source's); pdf + mineru is not
downloaded, the remote parser gets a presigned URL; everything else is streamed to the
task's temp file, parsed off the event loop, and the temp file is deleted as soon as the
Markdown exists.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import ClassVar, Protocol

import attrs

from ragline.application.error_text import StageFailure, describe
from ragline.application.pipeline.context import (
    RunContext,
    markdown_location,
)
from ragline.application.pipeline.markdown_bytes import write_utf8
from ragline.application.pipeline.outputs import StageInputs
from ragline.application.pipeline.parse_cache import CleaningParseCache
from ragline.application.pipeline.settings import MineruPolicy
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.images import publish_images, wants_images
from ragline.application.pipeline.stages.markdown_io import (
    disk_full,
    download,
    is_disk_full,
    refused_coordinates,
)
from ragline.application.pipeline.stages.needs import HasObjects, TemplateNeeds
from ragline.application.ports.object_storage import InvalidObjectKey, StorageError
from ragline.application.ports.parser import (
    SUPPORTED_FILE_TYPES,
    ParsedDocument,
    ParseError,
    ParseOptions,
    Parser,
    PdfParserBackend,
    tier_of,
)
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.tasks import ParseTaskCommand
from ragline.application.tasks.parse_task import is_markdown_source
from ragline.application.workspace import discard
from ragline.domain.parse_batch import SourceRef
from ragline.domain.parse_run import FailureCode, MarkdownLocation, Stage

MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8"


@attrs.frozen
class CleanedMarkdown:
    """CLEANING's output: where its Markdown is stored (recorded on the run, so a resume
    finds it), the text itself (CHUNKING need not download it again) and what really
    parsed it (stored on the parsed-log row with the success)."""

    location: MarkdownLocation
    text: str
    parse_backend: str
    parse_warnings: tuple[str, ...] = ()


class CleaningNeeds(TemplateNeeds, HasObjects, Protocol):
    """CLEANING reads the source, parses it (the parse cache first) and stores Markdown."""

    @property
    def parser(self) -> Parser: ...

    @property
    def mineru(self) -> Parser | None: ...

    @property
    def parse_cache(self) -> CleaningParseCache | None: ...


class CleaningStage(PipelineStage[CleanedMarkdown]):
    stage: ClassVar[Stage] = Stage.CLEANING
    gives: ClassVar[type | None] = CleanedMarkdown

    def __init__(self, services: CleaningNeeds) -> None:
        super().__init__(services)
        self.services: CleaningNeeds = services

    async def run(self, ctx: RunContext, inputs: StageInputs) -> CleanedMarkdown:
        task = ctx.task
        file_type = task.file_type.lower()
        if file_type not in SUPPORTED_FILE_TYPES:
            raise StageFailure(FailureCode.UNSUPPORTED_FILE_TYPE, f"file_type {file_type!r}")
        location = markdown_location(task)
        try:
            cleaned = await self._parse(ctx, file_type, location)
            if is_markdown_source(task):
                # Passthrough: the Markdown parser only validates (UTF-8, not binary, sane
                # lines); nothing is converted or copied, the source is the Markdown.
                return cleaned
        except OSError as error:
            if is_disk_full(error):
                raise disk_full(error) from error
            raise
        if not await self._unchanged(location, cleaned.text):
            await self._upload(task.task_id, location, cleaned.text)
        return cleaned

    def markdown_of(self, output: CleanedMarkdown) -> MarkdownLocation:
        return output.location

    async def on_success(self, uow: UnitOfWork, ctx: RunContext, output: CleanedMarkdown) -> None:
        location = output.location
        await uow.parsed_logs.set_parsed_location(ctx.task_id, location.bucket, location.object_key)
        await uow.parsed_logs.set_parse_outcome(
            ctx.task_id, output.parse_backend, output.parse_warnings
        )

    def _options(self, task: ParseTaskCommand, backend: PdfParserBackend) -> ParseOptions:
        """The tier follows the backend (naive: basic; the others: quality), never silently."""
        return ParseOptions(
            pdf_parser_backend=backend,
            docling_force_ocr=bool(task.docling_force_ocr),
            limits=self.services.settings.parse_limits,
            tier=tier_of(backend),
            extract_images=wants_images(task),
        )

    def _backend(self, task: ParseTaskCommand, notes: list[str]) -> PdfParserBackend:
        """The backend asked for; mineru without a client follows the configured policy."""
        backend = task.pdf_parser_backend
        if backend is PdfParserBackend.MINERU and self.services.mineru is None:
            settings = self.services.settings
            if settings.mineru_unavailable is MineruPolicy.FAIL:
                raise StageFailure(
                    FailureCode.MINERU_UNAVAILABLE,
                    "pdf_parser_backend=mineru but no MinerU client is configured "
                    "(RAGLINE_MINERU_TOKEN unset; RAGLINE_MINERU_UNAVAILABLE=fail)",
                )
            notes.append(
                f"mineru asked for but not configured: fell back to {settings.default_pdf_backend}"
            )
            return settings.default_pdf_backend
        return backend

    def _parser_for(self, backend: PdfParserBackend) -> Parser:
        mineru = self.services.mineru
        return mineru if backend is PdfParserBackend.MINERU and mineru else self.services.parser

    async def _parse(
        self, ctx: RunContext, file_type: str, location: MarkdownLocation
    ) -> CleanedMarkdown:
        """What really parsed, and every warning, are kept with the Markdown."""
        services, task, notes = self.services, ctx.task, list[str]()
        backend = self._backend(task, notes) if file_type == "pdf" else PdfParserBackend.AUTO
        with services.workspace.temp_file(task.task_id, file_type) as path:
            options = self._options(task, backend)
            cached = None
            if backend is PdfParserBackend.MINERU:
                options = await self._direct_pull(task, options)
            elif (cached := await self._cached(task, file_type, options)) is None:
                await download(
                    services,
                    task.source_bucket,
                    task.source_object_key,
                    path,
                    FailureCode.SOURCE_FILE_NOT_FOUND,
                )
            parser = self._parser_for(backend)
            try:
                # the parse cache knew this stored version: nothing downloaded, nothing parsed
                document = cached or await self._parse_file(task, parser, path, file_type, options)
            except ParseError as error:
                raise StageFailure(error.failure_code, error.reason) from error
            discard(path)  # the Markdown exists: the source copy goes now, not at the end
        markdown = await publish_images(services.storage, task, document)
        return CleanedMarkdown(
            location, markdown, document.backend or "unknown", (*notes, *document.warnings)
        )

    def _cache_for(
        self, task: ParseTaskCommand, options: ParseOptions
    ) -> CleaningParseCache | None:
        """The parse cache, except for MinerU's direct pull (no bytes here to hash), a task
        that wants its images uploaded (they are this task's output, not cached) and a
        Markdown passthrough: validating it costs less than the cache's lookup, plan, claim
        and second copy of the file (issue 24: 5 of 16 s over 183 pages)."""
        direct_pull = options.pdf_parser_backend is PdfParserBackend.MINERU
        if direct_pull or options.extract_images or is_markdown_source(task):
            return None
        return self.services.parse_cache

    async def _cached(
        self, task: ParseTaskCommand, file_type: str, options: ParseOptions
    ) -> ParsedDocument | None:
        cache = self._cache_for(task, options)
        if cache is None:
            return None
        source = SourceRef(task.source_bucket, task.source_object_key, file_type)
        backend = options.pdf_parser_backend.value
        return await cache.cached(
            file_type, source, options.tier, backend, holder=str(task.user_id)
        )

    async def _unchanged(self, location: MarkdownLocation, markdown: str) -> bool:
        """A forced re-run of an unchanged file need not write the same Markdown again."""
        cache = self.services.parse_cache
        return cache is not None and await cache.unchanged(
            location.bucket, location.object_key, markdown
        )

    async def _parse_file(
        self,
        task: ParseTaskCommand,
        parser: Parser,
        path: Path,
        file_type: str,
        options: ParseOptions,
    ) -> ParsedDocument:
        """The parse cache first (identical bytes at the same tier are parsed once); without
        it, the parser."""
        cache = self._cache_for(task, options)
        if cache is not None:
            source = SourceRef(task.source_bucket, task.source_object_key, file_type)
            backend = options.pdf_parser_backend.value
            found = await cache.parse(
                path, file_type, source, options.tier, backend, holder=str(task.user_id)
            )
            if found is not None:
                return found
        return await asyncio.to_thread(parser.parse, path, file_type, options)

    async def _direct_pull(self, task: ParseTaskCommand, options: ParseOptions) -> ParseOptions:
        """MinerU fetches the object itself: check it exists, hand over a presigned URL."""
        storage, bucket, key = self.services.storage, task.source_bucket, task.source_object_key
        try:
            found = await storage.stat(bucket, key)
            if found is None:
                raise StageFailure(FailureCode.SOURCE_FILE_NOT_FOUND, f"{bucket}/{key}")
            url = await storage.presigned_get_url(
                bucket, key, self.services.settings.presigned_url_ttl
            )
        except InvalidObjectKey as error:
            raise refused_coordinates(bucket, key, error) from error
        except StorageError as error:
            raise StageFailure(FailureCode.SOURCE_FILE_NOT_FOUND, describe(error)) from error
        return dataclasses.replace(options, mineru_url=url)

    async def _upload(self, task_id: str, location: MarkdownLocation, markdown: str) -> None:
        """Through a workspace file written a slice at a time (no second copy as bytes)."""
        try:
            with self.services.workspace.temp_file(f"{task_id}-markdown", "md") as path:
                await asyncio.to_thread(write_utf8, markdown, path)
                await self.services.storage.put_file(
                    location.bucket, location.object_key, path, MARKDOWN_CONTENT_TYPE
                )
        except InvalidObjectKey as error:
            raise refused_coordinates(location.bucket, location.object_key, error) from error
        except (StorageError, OSError) as error:
            if is_disk_full(error):
                raise disk_full(error) from error
            raise StageFailure(FailureCode.PARSED_FILE_UPLOAD_FAILED, describe(error)) from error
