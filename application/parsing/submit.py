"""SubmitParse: a parse request from a local file or a document reference, planned.

A reference is a sha256 (64 hex digits: bytes the cache has seen) or `bucket/key` (an object
in storage, checked against who asks by the ReferencePolicy before it is read: a tenant names
only its own `<user_id>/` keys of the tenant buckets). The file is hashed and its pages
counted; a local file is uploaded once under its content address (`PageStore.source_key`),
so any worker can fetch it. A page range past
the last page is refused (PageRangeOutOfBounds) before anything is planned.

Who holds the bytes is recorded with the plan (`holder`): the user a run or a request resolved
them for. A tenant's sha256 it does not hold is as unknown as one nobody has seen
(application/access/parse_cache.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from pathlib import Path, PurePosixPath

import attrs

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.access.parse_cache import may_see, record_holder
from ragline.application.parsing.batch_runner import LocalSource
from ragline.application.parsing.page_store import PageStore
from ragline.application.parsing.request_parse import ParseResponse, RequestParse
from ragline.application.ports.object_storage import ObjectNotFound, ObjectStorage
from ragline.application.ports.page_count import PageCounter
from ragline.application.ports.parser import (
    SUPPORTED_FILE_TYPES,
    InvalidFileContent,
    UnsupportedFileType,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.workspace import Workspace
from ragline.domain.parse_batch import (
    MAX_PAGE,
    PageRange,
    ParseBatch,
    ParseRequest,
    ParseTier,
    SourceRef,
)

SHA256 = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 1024 * 1024


class PageRangeOutOfBounds(ValueError):
    def __init__(self, pages: PageRange, page_count: int) -> None:
        super().__init__(f"page range {pages} is past the last page ({page_count})")
        self.pages = pages
        self.page_count = page_count


class UnknownDocument(LookupError):
    """The reference names no object, or a sha256 the cache has never seen."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def is_sha256(ref: str) -> bool:
    return SHA256.match(ref) is not None


def file_type_of(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower().lstrip(".")
    if suffix not in SUPPORTED_FILE_TYPES:
        raise UnsupportedFileType(f"file type {suffix or '(none)'!r} of {name!r}")
    return suffix


def split_object_ref(ref: str) -> tuple[str, str]:
    bucket, _, key = ref.partition("/")
    if not bucket or not key:
        raise UnknownDocument(f"{ref!r} is neither a sha256 nor bucket/key")
    return bucket, key


@attrs.frozen
class Submitted:
    response: ParseResponse
    source: SourceRef
    page_count: int
    known: tuple[ParseBatch, ...] = ()
    """Every batch of (sha256, tier) as planning left them (a done request reads these
    instead of asking the store again)."""


class SubmitParse:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        storage: ObjectStorage,
        workspace: Workspace,
        counter: PageCounter,
        pages: PageStore,
        request_parse: RequestParse,
        references: ReferencePolicy,
    ) -> None:
        self._uow_factory = uow_factory
        self._references = references
        self._storage = storage
        self._workspace = workspace
        self._counter = counter
        self._pages = pages
        self._request = request_parse

    async def version(
        self,
        tag: str,
        source: SourceRef,
        tier: ParseTier,
        backend: str | None = None,
        *,
        holder: str | None,
    ) -> Submitted | None:
        """Every page of a stored object version seen before (no bytes needed), or None."""
        found = await self._request.planned_for_version(tag, tier, source, backend, holder)
        if found is None:
            return None
        response, known, page_count = found
        return Submitted(response, source, page_count, tuple(known))

    async def measure(self, path: Path, file_type: str) -> tuple[str, int]:
        """(sha256, page count) of a local file (one trip off the event loop). A file of
        more pages than ragline plans (MAX_PAGE) is refused as content it cannot take."""

        def both() -> tuple[str, int]:
            return sha256_of(path), self._counter.count(path, file_type)

        digest, count = await asyncio.to_thread(both)
        if count > MAX_PAGE:
            raise InvalidFileContent(f"{count} pages, more than the {MAX_PAGE} ragline parses")
        return digest, count

    async def local(
        self,
        local: LocalSource,
        source: SourceRef,
        page_count: int,
        tier: ParseTier,
        pages: PageRange | None = None,
        *,
        force: bool = False,
        priority: int = 0,
        source_tag: str | None = None,
        backend: str | None = None,
        holder: str | None,
    ) -> Submitted:
        """Plan a request for bytes already measured (CLEANING, or after `file`); `holder`:
        the user they were read for (None: the service)."""
        wanted = pages or PageRange(1, page_count)
        if wanted.last > page_count:
            raise PageRangeOutOfBounds(wanted, page_count)
        request = ParseRequest(local.sha256, tier, wanted, force=force, priority=priority)
        response, known = await self._request.planned(
            request,
            source,
            page_count=page_count,
            source_tag=source_tag,
            backend=backend,
            holder=holder,
        )
        return Submitted(response, source, page_count, tuple(known))

    async def file(
        self,
        path: Path,
        tier: ParseTier,
        pages: PageRange | None = None,
        *,
        file_type: str | None = None,
        force: bool = False,
        holder: str | None,
    ) -> tuple[Submitted, LocalSource]:
        """A local file: hashed, counted, uploaded once under its content address."""
        kind = file_type or file_type_of(path.name)
        digest, count = await self.measure(path, kind)
        await self._pages.ensure_bucket()
        key = self._pages.source_key(digest, kind)
        if await self._storage.stat(self._pages.bucket, key) is None:
            await self._storage.put_file(self._pages.bucket, key, path)
        local = LocalSource(digest, path)
        source = SourceRef(self._pages.bucket, key, kind)
        submitted = await self.local(local, source, count, tier, pages, force=force, holder=holder)
        return submitted, local

    async def ref(
        self,
        doc_ref: str,
        tier: ParseTier,
        pages: PageRange | None = None,
        *,
        file_type: str | None = None,
        force: bool = False,
        caller: Caller,
    ) -> Submitted:
        """A sha256 the cache knows (and a tenant caller holds), or `bucket/key` of a stored
        object (whose naming the caller's reference check allowed): the caller holds it."""
        named = is_sha256(doc_ref)
        if named:
            source = await self._known_source(doc_ref, caller)
        else:
            bucket, key = self._object_ref(caller, doc_ref)
            source = SourceRef(bucket, key, file_type or file_type_of(key))
        # a name of its own: requests run at once, each with a SubmitParse of its own
        with self._workspace.temp_file(f"submit-{uuid.uuid4().hex}", source.file_type) as path:
            try:
                await self._storage.get_to_file(source.bucket, source.key, path)
            except ObjectNotFound as error:
                # a sha256's recorded object may be another holder's: never name it
                gone = f"the bytes of sha256 {doc_ref} are no longer stored"
                raise UnknownDocument(gone if named else str(error)) from None
            digest, count = await self.measure(path, source.file_type)
            if named and digest != doc_ref:
                raise UnknownDocument(f"the bytes recorded for sha256 {doc_ref} have changed")
            return await self.local(
                LocalSource(digest, path),
                source,
                count,
                tier,
                pages,
                force=force,
                holder=caller.user_id,
            )

    async def _known_source(self, sha256: str, caller: Caller) -> SourceRef:
        """Where the newest batch of these bytes found them; a tenant's unheld sha256 is
        unknown, with the very message of one nobody has seen."""
        async with self._uow_factory() as uow:
            seen = await may_see(uow, caller, sha256)
            source = await uow.parse_batches.latest_source(sha256) if seen else None
        if source is None:
            raise UnknownDocument(f"no parse of sha256 {sha256} is known")
        return source

    async def sha256_for(
        self, doc_ref: str, file_type: str | None = None, *, caller: Caller
    ) -> str:
        """The sha256 a reference names: itself (whether the caller may see it is the
        reader's question), or the hash of the stored object's bytes — an object `caller`
        may read (ReferenceRefused otherwise, before it is read), which it then holds."""
        if is_sha256(doc_ref):
            return doc_ref
        bucket, key = self._object_ref(caller, doc_ref)
        kind = file_type or PurePosixPath(key).suffix.lstrip(".").lower() or "bin"
        with self._workspace.temp_file(f"identify-{uuid.uuid4().hex}", kind) as path:
            try:
                await self._storage.get_to_file(bucket, key, path)
            except ObjectNotFound as error:
                raise UnknownDocument(str(error)) from None
            digest = await asyncio.to_thread(sha256_of, path)
        if caller.user_id is not None:
            async with self._uow_factory() as uow:
                if not await may_see(uow, caller, digest):
                    await record_holder(uow, caller.user_id, digest)
                    await uow.commit()
        return digest

    def _object_ref(self, caller: Caller, doc_ref: str) -> tuple[str, str]:
        bucket, key = split_object_ref(doc_ref)
        self._references.check_read(caller, "doc_ref", bucket, key)
        return bucket, key
