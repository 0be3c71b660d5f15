"""UploadDocument: a tenant hands in a file's bytes; ragline stores them under the tenant's own
prefix with a key it chooses and puts the ordinary parse task on the task topic.

The order is the safety: the size bound and the bytes' type first (nothing stored when
either refuses), then the reference policy on the task that would run (the one check every
entry point makes), then the Idempotency-Key row (the first insert wins), then the object,
then the task through SubmitTask (the HTTP submit's own path: task-id check, publish). The
stored object key is `<user_id>/uploads/<dataset_id>/<doc_id>/<task_id>/source.<type>`; the
client's file name is kept only as `source_filename` (what search shows), never as a path.

Idempotent: with a key, the same user and the same bytes answer the first upload's task and
document again, and publish nothing new once its run exists (before that, the task is put on
the topic again: a redelivery of the same task_id, which the pipeline runs once); the same
key with other bytes is IdempotencyConflict (HTTP 422). Without a key every upload is new.

A re-upload names the document (`doc_id`): its run is a new run of the same document, and the
pipeline's rules decide when the old version stops answering (docs/operations.md).
The run is ragline's own work (`issued_by: ragline`): the producer never issued its task_id,
so no ParseResult is published; follow it at `GET /api/v1/runs/{task_id}`.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from pathlib import Path, PurePosixPath

import attrs

from ragline.application.access import Caller, ReferencePolicy, ReferenceRefused
from ragline.application.debug import SubmitTask
from ragline.application.pipeline.context import document_scope
from ragline.application.ports.clock import Clock
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.parser import PdfParserBackend
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.repositories.uploads import UploadRecord
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import ParseTaskCommand, TaskIssuer
from ragline.application.uploads.sniff import sniff
from ragline.domain.metadata import DocumentMetadata

MAX_ID = 2**63 - 1
MAX_KEY = 128
CONTENT_TYPES = {
    "pdf": "application/pdf",
    "md": "text/markdown",
    "txt": "text/plain",
    "html": "text/html",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "eml": "message/rfc822",
    "png": "image/png",
    "jpg": "image/jpeg",
    "tiff": "image/tiff",
}


class UploadTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"uploads are limited to {limit} bytes")
        self.limit = limit


class IdempotencyConflict(ValueError):
    """The Idempotency-Key was used by this user for other bytes or another document."""


class BadUpload(ValueError):
    """An id the upload names is not one a task can carry (the message says which)."""


@attrs.frozen(kw_only=True)
class Upload:
    """What one upload asks; a field added here (e.g. metadata) reaches the task builder."""

    user_id: str
    dataset_id: str
    filename: str
    path: Path
    doc_id: str | None = None
    idempotency_key: str | None = None
    metadata: DocumentMetadata | None = None
    """Stored as the document's metadata before its task runs (replacing what it had), so
    the indexing stages label its points with it; None leaves the document's as they are."""


@attrs.frozen
class UploadAccepted:
    task_id: str
    doc_id: str
    file_type: str
    source_bucket: str
    source_object_key: str
    replayed: bool
    """True: the answer of an earlier upload with the same Idempotency-Key."""


def _int_id(name: str, value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_ID:
        raise BadUpload(f"{name} must be an integer from 1 to {MAX_ID}")
    return int(value)


def _digest_id(*parts: str) -> int:
    """A positive 53-bit id from `parts` (a JavaScript client reads it exactly)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**53 - 1) + 1


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _display_name(filename: str, file_type: str) -> str:
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    cleaned = "".join(ch for ch in name if ch.isprintable())[:200]
    return cleaned or f"upload.{file_type}"


class UploadDocument:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        storage: ObjectStorage,
        submit: SubmitTask,
        references: ReferencePolicy,
        clock: Clock,
        *,
        source_bucket: str,
        md_bucket: str,
        max_bytes: int,
        pdf_backend: PdfParserBackend = PdfParserBackend.AUTO,
    ) -> None:
        self._uow_factory = uow_factory
        self._storage = storage
        self._submit = submit
        self._references = references
        self._clock = clock
        self._source_bucket = source_bucket
        self._md_bucket = md_bucket
        self.max_bytes = max_bytes
        self._pdf_backend = pdf_backend

    async def __call__(self, caller: Caller, upload: Upload) -> UploadAccepted:
        """UploadTooLarge, UnsupportedUpload, BadUpload, ReferenceRefused (nothing stored for
        any), IdempotencyConflict."""
        if not caller.may_act_for(upload.user_id):
            raise ReferenceRefused("user_id", "must be the token's own user")
        if upload.path.stat().st_size > self.max_bytes:
            raise UploadTooLarge(self.max_bytes)
        key = upload.idempotency_key
        if key is not None and not (0 < len(key) <= MAX_KEY and key.isprintable()):
            raise BadUpload(f"Idempotency-Key has 1 to {MAX_KEY} printable characters")
        file_type = await asyncio.to_thread(sniff, upload.path, upload.filename)
        sha256 = await asyncio.to_thread(_sha256, upload.path)
        _int_id("user_id", upload.user_id)
        _int_id("dataset_id", upload.dataset_id)
        if key is not None:
            async with self._uow_factory() as uow:
                first = await uow.uploads.get(upload.user_id, key)
            if first is not None:
                return await self._replay(caller, upload, first, sha256, file_type)
        doc_id = upload.doc_id or str(
            _digest_id(upload.user_id, upload.dataset_id, key or secrets.token_hex(16))
        )
        _int_id("doc_id", doc_id)
        nonce = key if key is not None else secrets.token_hex(16)
        task_id = f"upload-{_digest_id(upload.user_id, nonce, sha256):x}"
        task = self._task(upload, doc_id, task_id, file_type)
        self._references.check_task(caller, task)  # before anything is stored
        if key is not None:
            record = UploadRecord(
                upload.user_id, key, sha256, upload.dataset_id, doc_id, task_id, self._clock.now()
            )
            async with self._uow_factory() as uow:
                won = await uow.uploads.add(record)
                if won:
                    await uow.commit()
                else:
                    first = await uow.uploads.get(upload.user_id, key)
            if not won:
                assert first is not None  # the row that won the key  # nosec B101
                return await self._replay(caller, upload, first, sha256, file_type)
        if upload.metadata is not None:
            await self._label(task, upload.metadata)
        await self._store_and_submit(caller, upload, task)
        return self._accepted(task, replayed=False)

    async def _label(self, task: ParseTaskCommand, metadata: DocumentMetadata) -> None:
        """The upload's metadata replaces the document's (a compare-and-set on its version;
        a PUT landing in between is overwritten by this newer request, never lost silently:
        the next attempt reads its version)."""
        scope = document_scope(task)
        for _ in range(3):
            async with self._uow_factory() as uow:
                stored = await uow.documents.metadata_of(scope)
                version = stored.version if stored is not None else 0
                if await uow.documents.put_metadata(scope, metadata, expected_version=version):
                    await uow.commit()
                    return
        raise ConcurrentUpdate(f"document {scope.doc_id}: its metadata keeps changing")

    async def _replay(
        self,
        caller: Caller,
        upload: Upload,
        first: UploadRecord,
        sha256: str,
        file_type: str,
    ) -> UploadAccepted:
        same_doc = upload.doc_id in (None, first.doc_id)
        if first.sha256 != sha256 or first.dataset_id != upload.dataset_id or not same_doc:
            raise IdempotencyConflict(
                "this Idempotency-Key was used for another file or document; use a new key"
            )
        task = self._task(upload, first.doc_id, first.task_id, file_type)
        self._references.check_task(caller, task)
        async with self._uow_factory() as uow:
            run = await uow.runs.get(first.task_id)
        if run is None:  # the first request may have stopped before its task was published
            await self._store_and_submit(caller, upload, task)
        return self._accepted(task, replayed=True)

    async def _store_and_submit(
        self, caller: Caller, upload: Upload, task: ParseTaskCommand
    ) -> None:
        await self._storage.ensure_bucket(task.source_bucket)
        await self._storage.put_file(
            task.source_bucket,
            task.source_object_key,
            upload.path,
            CONTENT_TYPES.get(task.file_type, "application/octet-stream"),
        )
        await self._submit(caller, task)

    def _task(self, upload: Upload, doc_id: str, task_id: str, file_type: str) -> ParseTaskCommand:
        folder = f"{upload.user_id}/uploads/{upload.dataset_id}/{doc_id}/{task_id}"
        return ParseTaskCommand(
            task_id=task_id,
            original_file_id=int(doc_id),
            document_parse_task_id=_digest_id(task_id),
            user_id=int(upload.user_id),
            dataset_id=int(upload.dataset_id),
            file_type=file_type,
            source_bucket=self._source_bucket,
            source_object_key=f"{folder}/source.{file_type}",
            source_filename=_display_name(upload.filename, file_type),
            md_bucket=self._md_bucket,
            md_object_key=f"{folder}/document.md",
            pdf_parser_backend=self._pdf_backend,
            issued_by=TaskIssuer.RAGLINE,
        )

    @staticmethod
    def _accepted(task: ParseTaskCommand, *, replayed: bool) -> UploadAccepted:
        return UploadAccepted(
            task.task_id,
            str(task.original_file_id),
            task.file_type,
            task.source_bucket,
            task.source_object_key,
            replayed,
        )
