"""CLEANING asks the parse cache first (docs/design/0003-parse-cache.md): identical bytes at the
same tier are never parsed again.

Every page of the source is requested without force (so a `ragline ingest --force` re-run, a
retry from CLEANING and a re-upload of the same bytes reuse done and in-flight batches).
Two ways in:

- `cached`, before anything is downloaded: the source object's stored version (bucket, key,
  etag) names a batch planned earlier, which knows its sha256 and page count; if the done
  cache covers every page the Markdown is read back and nothing is downloaded or parsed;
- `parse`, on the downloaded file: hashed and counted; the batches the request waits on run
  here on that file (or elsewhere, by whichever worker claimed them), then the Markdown is
  read back. A failed batch fails the stage with the batch's own failure code.

`unchanged` tells CLEANING the Markdown object already holds exactly these bytes (a forced
re-run of an unchanged file), so it is not written again. A Markdown source (passthrough) does
not come here (validating it costs less than a plan, a claim and a copy), nor does MinerU's
direct pull (no bytes here to hash).

Either way the run's user is recorded as a holder of the bytes in the unit of work that plans
their batches, so it may read them over the API (docs/security.md, "Parse cache
visibility"). The pipeline itself reads the cache as the service: it is the broker's
consumer, and it has just read the bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from pathlib import Path

from ragline.application.access.caller import Caller
from ragline.application.error_text import StageFailure
from ragline.application.parsing import (
    LocalSource,
    ParseBatchRunner,
    ReadParse,
    SubmitParse,
)
from ragline.application.pipeline.markdown_bytes import utf8_slices
from ragline.application.ports.object_storage import ObjectStorage, StorageError
from ragline.application.ports.parser import ParsedDocument, ParseError
from ragline.domain.parse_batch import (
    PageRange,
    ParseBatch,
    ParseTier,
    RequestStatus,
    SourceRef,
    source_tag,
)
from ragline.domain.parse_run import FailureCode

PAGED_TYPES = frozenset({"pdf"})
PIPELINE = Caller.service()


def failure_code(code: str | None) -> FailureCode:
    try:
        return FailureCode(code or "")
    except ValueError:
        return FailureCode.PARSE_ENGINE_FAILED


def holds(etag: str, size: int, markdown: str) -> bool:
    """Does an object of this etag and size hold exactly `markdown` (UTF-8)? Stores tag an
    object by a digest of its bytes (sha256 for the local store, MD5 for a single-part
    S3/MinIO put); any other tag (multipart S3) answers no, and the caller writes."""
    if size < len(markdown) or size > 4 * len(markdown):
        return False  # cannot be its UTF-8: not worth hashing
    sha, md5, length = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    for block in utf8_slices(markdown):
        sha.update(block)
        md5.update(block)
        length += len(block)
    return length == size and etag.strip('"').lower() in (sha.hexdigest(), md5.hexdigest())


class CleaningParseCache:
    def __init__(
        self,
        submit: SubmitParse,
        runner: ParseBatchRunner,
        reader: ReadParse,
        storage: ObjectStorage,
    ):
        self._submit = submit
        self._runner = runner
        self._reader = reader
        self._storage = storage

    async def _version(self, source: SourceRef) -> str | None:
        try:
            found = await self._storage.stat(source.bucket, source.key)
        except StorageError:
            return None
        return None if found is None else source_tag(source.bucket, source.key, found.etag)

    async def cached(
        self,
        file_type: str,
        source: SourceRef,
        tier: ParseTier,
        backend: str | None = None,
        *,
        holder: str,
    ) -> ParsedDocument | None:
        """The Markdown without downloading the source, when this stored version of it was
        seen before and every page is in the done cache; None otherwise. `holder`: the
        run's user."""
        tag = await self._version(source)
        if tag is None:
            return None
        submitted = await self._submit.version(tag, source, tier, backend, holder=holder)
        if submitted is None or submitted.response.wait_parse_ids:
            return None  # unseen, or something to parse: download, and parse it on the file
        response = submitted.response
        return await self._read(
            response.sha256, tier, submitted.page_count, file_type, submitted.known
        )

    async def parse(
        self,
        path: Path,
        file_type: str,
        source: SourceRef,
        tier: ParseTier,
        backend: str | None = None,
        *,
        holder: str,
    ) -> ParsedDocument | None:
        """The document's Markdown from the cache, parsing (here) only what is missing;
        StageFailure when a batch failed. None when the pages cannot be counted (a file
        that is not what its type says): the parser itself is then asked, and says why."""
        try:
            sha256, page_count = await self._submit.measure(path, file_type)
        except ParseError:
            return None
        local = LocalSource(sha256, path)
        tag = await self._version(source)
        submitted = await self._submit.local(
            local, source, page_count, tier, source_tag=tag, backend=backend, holder=holder
        )
        waiting = submitted.response.wait_parse_ids
        if waiting:
            ended = await self._runner.run_ids(waiting, local)
            if ended.status is RequestStatus.FAILED:
                first = ended.failed[0]
                raise StageFailure(failure_code(first.error_code), first.error_msg or ended.message)
        known = None if waiting else submitted.known  # nothing ran: planning saw it all
        return await self._read(sha256, tier, page_count, file_type, known)

    async def _read(
        self,
        sha256: str,
        tier: ParseTier,
        page_count: int,
        file_type: str,
        known: Sequence[ParseBatch] | None,
    ) -> ParsedDocument:
        cached = await self._reader.markdown(
            sha256, tier, PageRange(1, page_count), caller=PIPELINE, known=known
        )
        return ParsedDocument(
            markdown=cached.markdown,
            page_count=page_count if file_type in PAGED_TYPES else None,
            backend="+".join(cached.backends),
            warnings=list(cached.warnings),
            pages=cached.pages if file_type in PAGED_TYPES else (),
        )

    async def unchanged(self, bucket: str, key: str, markdown: str) -> bool:
        """The object at bucket/key holds exactly this Markdown already."""
        try:
            found = await self._storage.stat(bucket, key)
        except StorageError:
            return False
        if found is None:
            return False
        return await asyncio.to_thread(holds, found.etag, found.size, markdown)  # hashes
