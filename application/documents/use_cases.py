"""ListDocuments and DeleteDocument.

A document is the producer's original file (`original_file_id`, the chunks' `doc_id`)
within one tenant scope (user, dataset); its runs are its history. Every query is scoped by
the user asked for, so another user's document is simply not found.
"""

from __future__ import annotations

import attrs

from ragline.application.pipeline.context import MARKDOWN_PASSTHROUGH_TYPES
from ragline.application.ports.clock import Clock
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.unit_of_work import ChunkCounts, DocumentScope, UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.domain.parse_run import ParseRun

MAX_PAGE_SIZE = 200


class DocumentNotFound(LookupError):
    """No such document in this user's dataset (or it was deleted)."""


class DocumentBusy(RuntimeError):
    """The document's newest run is still PENDING or PROCESSING: deleting now would race
    the stages writing it."""


@attrs.frozen
class DocumentSummary:
    doc_id: str
    latest_run: ParseRun
    chunks: ChunkCounts


@attrs.frozen
class DocumentList:
    documents: list[DocumentSummary]
    total: int
    page: int
    page_size: int


@attrs.frozen
class DeletedDocument:
    doc_id: str
    chunks: int  # chunk rows deleted by this call
    keyword_docs: int  # keyword docs deleted by this call
    markdown_deleted: bool  # whether ragline's Markdown object was removed (never a source)


def _paging(page: int, page_size: int) -> tuple[int, int]:
    if page < 1 or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page >= 1 and 1 <= page_size <= {MAX_PAGE_SIZE}")
    return (page - 1) * page_size, page_size


class ListDocuments:
    def __init__(self, uow_factory: UnitOfWorkFactory) -> None:
        self._uow_factory = uow_factory

    async def __call__(
        self, user_id: str, dataset_id: str, page: int = 1, page_size: int = 50
    ) -> DocumentList:
        offset, limit = _paging(page, page_size)
        async with self._uow_factory() as uow:
            found = await uow.runs.latest_per_document(
                user_id, dataset_id, offset=offset, limit=limit
            )
            counts = await uow.chunks.document_counts(
                user_id, dataset_id, [doc for doc, _ in found.latest]
            )
        return DocumentList(
            [
                DocumentSummary(doc, run, counts.get(doc, ChunkCounts()))
                for doc, run in found.latest
            ],
            found.total,
            page,
            page_size,
        )


class DeleteDocument:
    """Delete a document's keyword docs, dense and sparse points, the Markdown ragline wrote
    and its chunk rows, then mark its runs deleted.

    Safe to repeat when it fails midway: each step is idempotent (deleting what is gone is
    not an error), and the steps that the document is found by come last — the chunk rows
    and the runs' deletion mark are written in one unit of work after every index and
    object is gone. Until that commit the document is still listed and a repeat redoes
    every step; after it the document is not found (a repeat answers DocumentNotFound).
    The runs themselves stay: they are the history and the idempotency barrier (a
    redelivered task must not run again). The source file is the producer's and is never
    deleted: for md/markdown the Markdown *is* the source, so nothing is deleted there.
    A document whose newest run is unfinished is refused (DocumentBusy).
    """

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        vectors: VectorIndex,
        keywords: KeywordIndex,
        storage: ObjectStorage,
        clock: Clock,
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._keywords = keywords
        self._storage = storage
        self._clock = clock

    async def __call__(self, user_id: str, dataset_id: str, doc_id: str) -> DeletedDocument:
        async with self._uow_factory() as uow:
            latest = await uow.runs.latest_for_document(user_id, dataset_id, doc_id)
        if latest is None:
            raise DocumentNotFound(f"no document {doc_id} in dataset {dataset_id}")
        if not latest.is_terminal:
            raise DocumentBusy(f"document {doc_id} has a run in progress ({latest.task_id})")
        scope = DocumentScope(user_id, dataset_id, doc_id)
        keyword_docs = await self._keywords.delete_document(user_id, dataset_id, doc_id)
        await self._vectors.delete_document(user_id, dataset_id, doc_id)  # dense and sparse
        markdown_deleted = False
        markdown = latest.markdown
        if (
            markdown is not None
            and latest.identity.file_type.lower() not in MARKDOWN_PASSTHROUGH_TYPES
        ):
            await self._storage.delete(markdown.bucket, markdown.object_key)
            markdown_deleted = True
        async with self._uow_factory() as uow:
            chunks = await uow.chunks.delete_document(scope)
            await uow.runs.mark_document_deleted(user_id, dataset_id, doc_id, self._clock.now())
            await uow.commit()
        return DeletedDocument(doc_id, chunks, keyword_docs, markdown_deleted)
