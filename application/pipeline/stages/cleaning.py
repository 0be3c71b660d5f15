"""CLEANING: source file -> Markdown in object storage (SPEC §3 stage 1).

md/markdown is passed through (its coordinates are the source's); pdf + mineru is not
downloaded, the remote parser gets a presigned URL; everything else is streamed to the
task's temp file, parsed off the event loop, and the temp file is deleted as soon as the
Markdown exists.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from ragline.application.pipeline.context import (
    RunContext,
    is_markdown_source,
    markdown_location,
)
from ragline.application.pipeline.errors import StageFailure, describe
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.markdown_io import (
    disk_full,
    download,
    is_disk_full,
)
from ragline.application.pipeline.workspace import discard
from ragline.application.ports.object_storage import StorageError
from ragline.application.ports.parser import (
    SUPPORTED_FILE_TYPES,
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
    PdfParserBackend,
    UnsupportedFileType,
)
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_batch import SourceRef
from ragline.domain.parse_run import FailureCode, MarkdownLocation, Stage

MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8"


class CleaningStage(PipelineStage):
    stage: ClassVar[Stage] = Stage.CLEANING
    failure_code: ClassVar[FailureCode] = FailureCode.PARSE_ENGINE_FAILED

    async def run(self, ctx: RunContext) -> MarkdownLocation:
        task = ctx.task
        file_type = task.file_type.lower()
        if file_type not in SUPPORTED_FILE_TYPES:
            raise StageFailure(FailureCode.UNSUPPORTED_FILE_TYPE, f"file_type {file_type!r}")
        location = markdown_location(task)
        try:
            markdown = await self._parse(task, file_type)
            if is_markdown_source(task):
                # Passthrough: the Markdown parser only validates (UTF-8, not binary, sane
                # lines); nothing is converted or copied, the source is the Markdown.
                ctx.markdown = markdown
                return location
        except OSError as error:
            if is_disk_full(error):
                raise disk_full(error) from error
            raise
        if not await self._unchanged(location, markdown):
            await self._upload(location, markdown)
        ctx.markdown = markdown
        return location

    async def on_success(self, uow: UnitOfWork, ctx: RunContext) -> None:
        location = markdown_location(ctx.task)
        await uow.parsed_logs.set_parsed_location(ctx.task_id, location.bucket, location.object_key)

    def _options(self, task: ParseTaskCommand, backend: PdfParserBackend) -> ParseOptions:
        return ParseOptions(
            pdf_parser_backend=backend,
            docling_force_ocr=bool(task.docling_force_ocr),
            limits=self.services.settings.parse_limits,
        )

    def _backend(self, task: ParseTaskCommand) -> PdfParserBackend:
        backend = task.pdf_parser_backend
        if backend is PdfParserBackend.MINERU and not self.services.settings.mineru_enabled:
            return self.services.settings.default_pdf_backend
        return backend

    async def _parse(self, task: ParseTaskCommand, file_type: str) -> str:
        services = self.services
        backend = self._backend(task) if file_type == "pdf" else PdfParserBackend.AUTO
        with services.workspace.temp_file(task.task_id, file_type) as path:
            options = self._options(task, backend)
            if backend is PdfParserBackend.MINERU:
                options = await self._direct_pull(task, options)
            elif (cached := await self._cached(task, file_type, options)) is not None:
                return cached.markdown  # the parse cache knew this stored version: no download
            else:
                await download(
                    services,
                    task.source_bucket,
                    task.source_object_key,
                    path,
                    FailureCode.SOURCE_FILE_NOT_FOUND,
                )
            try:
                document = await self._parse_file(task, path, file_type, options)
            except UnsupportedFileType as error:
                raise StageFailure(FailureCode.UNSUPPORTED_FILE_TYPE, error.reason) from error
            except ParseEngineFailed as error:
                raise StageFailure(FailureCode.PARSE_ENGINE_FAILED, error.reason) from error
            discard(path)  # the Markdown exists: the source copy goes now, not at the end
        return document.markdown

    async def _cached(
        self, task: ParseTaskCommand, file_type: str, options: ParseOptions
    ) -> ParsedDocument | None:
        cache = self.services.parse_cache
        if cache is None:
            return None
        source = SourceRef(task.source_bucket, task.source_object_key, file_type)
        return await cache.cached(file_type, source, options.pdf_parser_backend)

    async def _unchanged(self, location: MarkdownLocation, markdown: str) -> bool:
        """A forced re-run of an unchanged file need not write the same Markdown again."""
        cache = self.services.parse_cache
        return cache is not None and await cache.unchanged(
            location.bucket, location.object_key, markdown
        )

    async def _parse_file(
        self, task: ParseTaskCommand, path: Path, file_type: str, options: ParseOptions
    ) -> ParsedDocument:
        """The parse cache first (identical bytes at the same tier are parsed once), except
        for MinerU's direct pull; without a cache, the parser."""
        cache = self.services.parse_cache
        direct_pull = options.pdf_parser_backend is PdfParserBackend.MINERU
        if cache is None or direct_pull:
            return await asyncio.to_thread(self.services.parser.parse, path, file_type, options)
        source = SourceRef(task.source_bucket, task.source_object_key, file_type)
        return await cache.parse(path, file_type, source, options.pdf_parser_backend)

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
        except StorageError as error:
            raise StageFailure(FailureCode.SOURCE_FILE_NOT_FOUND, describe(error)) from error
        return ParseOptions(
            pdf_parser_backend=options.pdf_parser_backend,
            docling_force_ocr=options.docling_force_ocr,
            mineru_url=url,
            limits=options.limits,
        )

    async def _upload(self, location: MarkdownLocation, markdown: str) -> None:
        try:
            await self.services.storage.put_bytes(
                location.bucket,
                location.object_key,
                markdown.encode("utf-8"),
                MARKDOWN_CONTENT_TYPE,
            )
        except (StorageError, OSError) as error:
            if is_disk_full(error):
                raise disk_full(error) from error
            raise StageFailure(FailureCode.PARSED_FILE_UPLOAD_FAILED, describe(error)) from error
