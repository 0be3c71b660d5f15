"""ListDocuments, DeleteDocument and ReindexDocument.

A document is the producer's original file (`original_file_id`, the chunks' `doc_id`)
within one tenant scope (user, dataset); its runs are its history. Every query is scoped by
the user asked for, so another user's document is simply not found.

A document's state is that of the run that owns its index (`ParseRun.touched_index`: the
newest run that got to CHUNKING, or inherited it in a retry lineage), not of the newest
message that arrived: a refused retry or a new upload that failed while CLEANING leaves
the index, and so the state, as it was; a run that replaced the chunk set and then failed
makes it FAILED. A document no run indexed has its newest run's state. The newest attempt
is shown beside it (`latest_run`).
"""

from __future__ import annotations

import re

import attrs

from ragline.application.access import Caller, ReferencePolicy
from ragline.application.ports.clock import Clock
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.repositories.chunks import ChunkCounts
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.task_messages import TaskPublisher
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.search.spaces import dense_indexes, user_indexes
from ragline.application.tasks import ParseTaskCommand, RejectedBody, TaskIssuer, TriggerMode
from ragline.application.tasks.parse_task import MARKDOWN_PASSTHROUGH_TYPES
from ragline.domain.parse_run import MarkdownLocation, ParseRun, PipelineStatus

MAX_PAGE_SIZE = 200


class DocumentNotFound(LookupError):
    """No such document in this user's dataset (or it was deleted)."""


class DocumentBusy(RuntimeError):
    """The document's newest run is still PENDING or PROCESSING: deleting or re-indexing
    now would race the stages writing it."""


class NotReindexable(RuntimeError):
    """The document has no stored Markdown to re-index from (or no readable task)."""


@attrs.frozen
class DocumentSummary:
    doc_id: str
    latest_run: ParseRun  # the newest attempt, whatever it did
    chunks: ChunkCounts
    indexed_run: ParseRun | None = None  # the run that owns the index, if any did

    @property
    def state(self) -> PipelineStatus:
        """The index owner's status; without one, the newest run's."""
        return (self.indexed_run or self.latest_run).pipeline_status


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
    markdown_deleted: bool  # whether a Markdown object ragline wrote was removed (never a source)


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
            found = await uow.documents.latest_per_document(
                user_id, dataset_id, offset=offset, limit=limit
            )
            docs = [doc for doc, _ in found.latest]
            counts = await uow.chunks.document_counts(user_id, dataset_id, docs)
            owners = await uow.documents.index_owners(user_id, dataset_id, docs)
        return DocumentList(
            [
                DocumentSummary(doc, run, counts.get(doc, ChunkCounts()), owners.get(doc))
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
    redelivered task must not run again). A document whose newest run is unfinished is
    refused (DocumentBusy).

    Objects: only what ragline wrote for this document is removed — the Markdown of its runs
    that converted a file — and never an object another live document's run (any tenant's)
    names as its source or Markdown, nor one this document's own runs read as a source, nor
    anything in ragline's own areas (the parse cache): a task stored before the reference
    rule, or a service's task, may have named such an object as its Markdown target. The
    source file is the producer's and is never deleted: for md/markdown the Markdown *is*
    the source, so nothing is deleted there. Images are not recorded per run, so the
    objects under a task's image prefix are left to their producer (docs/security.md).
    """

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        vectors: VectorIndex,
        keywords: KeywordIndex,
        storage: ObjectStorage,
        clock: Clock,
        references: ReferencePolicy,
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._keywords = keywords
        self._storage = storage
        self._clock = clock
        self._references = references

    async def __call__(self, user_id: str, dataset_id: str, doc_id: str) -> DeletedDocument:
        async with self._uow_factory() as uow:
            latest = await uow.documents.latest_for_document(user_id, dataset_id, doc_id)
        if latest is None:
            raise DocumentNotFound(f"no document {doc_id} in dataset {dataset_id}")
        if not latest.is_terminal:
            raise DocumentBusy(f"document {doc_id} has a run in progress ({latest.task_id})")
        scope = DocumentScope(user_id, dataset_id, doc_id)
        keyword_docs = await self._keywords.delete_document(user_id, dataset_id, doc_id)
        # dense and sparse in the base index, dense in the active and shadow generations
        for index in await dense_indexes(self._uow_factory, self._vectors, user_id):
            await index.delete_document(user_id, dataset_id, doc_id)
        async with self._uow_factory() as uow:
            written = await _markdown_written(uow, scope)
            in_use = await uow.documents.objects_in_use(written, scope) if written else set()
        removable = [
            markdown
            for markdown in written
            if markdown not in in_use
            and not self._references.reserves(markdown.bucket, markdown.object_key)
        ]
        for markdown in removable:
            await self._storage.delete(markdown.bucket, markdown.object_key)
        async with self._uow_factory() as uow:
            chunks = await uow.chunks.delete_document(scope)
            await uow.documents.mark_document_deleted(
                user_id, dataset_id, doc_id, self._clock.now()
            )
            await uow.commit()
        # a re-embedding's copy batch that read the rows before they went may have written
        # the document into the shadow after the delete above; one that writes after this
        # re-reads its range and removes what it wrote (Reembeddings._drop_gone)
        async with self._uow_factory() as uow:
            shadow = (await user_indexes(uow, self._vectors, user_id)).shadow
        if shadow is not None:
            await shadow.index.delete_document(user_id, dataset_id, doc_id)
        return DeletedDocument(doc_id, chunks, keyword_docs, bool(removable))


RUNS_READ = 1000
"""How many of a document's runs DeleteDocument reads for their Markdown locations."""


async def _markdown_written(uow: UnitOfWork, scope: DocumentScope) -> list[MarkdownLocation]:
    """Every Markdown object ragline wrote for the document: the locations of its runs that
    converted a file (an md/markdown run's location is its source, never ragline's; a
    re-index run's is the converted Markdown an earlier run wrote, listed by that run)."""
    query = RunQuery(user_id=scope.user_id, dataset_id=scope.dataset_id, doc_id=scope.doc_id)
    found = await uow.runs.list_page(query, limit=RUNS_READ)
    return list(
        dict.fromkeys(
            run.markdown
            for run in found.runs
            if run.markdown is not None
            and run.identity.file_type.lower() not in MARKDOWN_PASSTHROUGH_TYPES
        )
    )


_REINDEX_SUFFIX = re.compile(r"-x(\d+)$")


def next_reindex_task_id(task_id: str) -> str:
    """`x` -> `x-x1`, `x-x1` -> `x-x2`: the re-index runs of one document form one chain."""
    match = _REINDEX_SUFFIX.search(task_id)
    if match is None:
        return f"{task_id}-x1"
    return f"{task_id[: match.start()]}-x{int(match.group(1)) + 1}"


class ReindexDocument:
    """Re-index a document from its stored Markdown: publish a new parse task that reads the
    Markdown stored by the run that owns the document's index (its newest run when none
    does), through the ordinary pipeline.

    Why a new task and not a retry: the retry rules (invariant 6 of
    docs/design/0002-run-state-machine.md) only take over a FAILED, not yet superseded run, and a
    re-index is asked of a SUCCESS one; bending them would weaken the race arbitration they exist
    for. So the re-index is a fresh run (new task_id `<owner>-x<N>`, the first such id not taken) of
    the *same document* (user, dataset, original_file_id, document_parse_task_id) whose source is
    the stored Markdown, as `file_type` md: the
    pipeline's passthrough rule then applies — CLEANING neither converts nor copies (no
    re-parse, the source file is not read), CHUNKING re-chunks the stored Markdown with the
    current plan and replaces the chunk set atomically (deleting the document's stale
    vectors), VECTORIZING/SPARSE redo every new chunk, KEYWORD_INDEXING rebuilds the whole
    document. Every rule — idempotency on the task_id, results through the outbox,
    recoverable failures and their retry — is the pipeline's own. The task keeps the
    document's source filename (an HTML document stays `guide.html`, as search shows it)
    and is ragline's own work (`issued_by: ragline`): the producer never issued its
    task_id, so no result is published for it; follow it with `GET /runs/{task_id}`.

    Refused: no document (DocumentNotFound), a run in flight (DocumentBusy), no stored
    Markdown or no readable stored task (NotReindexable), and a re-index task naming what the
    caller may not (ReferenceRefused, nothing published: a task stored before a rule
    tightened may name objects a tenant may no longer; docs/security.md).
    """

    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        tasks: TaskPublisher,
        references: ReferencePolicy,
    ) -> None:
        self._uow_factory = uow_factory
        self._tasks = tasks
        self._references = references

    async def __call__(
        self, caller: Caller, user_id: str, dataset_id: str, doc_id: str
    ) -> ParseTaskCommand:
        async with self._uow_factory() as uow:
            latest = await uow.documents.latest_for_document(user_id, dataset_id, doc_id)
            if latest is None:
                raise DocumentNotFound(f"no document {doc_id} in dataset {dataset_id}")
            owners = await uow.documents.index_owners(user_id, dataset_id, [doc_id])
            source = owners.get(doc_id, latest)
            stored = await uow.parsed_logs.get(source.task_id)
            task_id = next_reindex_task_id(source.task_id)
            while await uow.runs.get(task_id) is not None:  # e.g. a re-index that was refused
                task_id = next_reindex_task_id(task_id)
        if not latest.is_terminal:
            raise DocumentBusy(f"document {doc_id} has a run in progress ({latest.task_id})")
        markdown = source.markdown
        if markdown is None or stored is None:
            raise NotReindexable(f"document {doc_id} has no stored Markdown to re-index from")
        task = stored.task
        if isinstance(task, RejectedBody):
            raise NotReindexable(f"the task of {source.task_id} is unreadable ({task.reason})")
        reindex = attrs.evolve(
            task,
            task_id=task_id,
            file_type="md",
            source_bucket=markdown.bucket,
            source_object_key=markdown.object_key,
            md_bucket=markdown.bucket,
            md_object_key=markdown.object_key,
            trigger_mode=TriggerMode.MANUAL_RETRY,
            is_retry=False,
            previous_task_id=None,
            issued_by=TaskIssuer.RAGLINE,
        )
        self._references.check_task(caller, reindex)
        await self._tasks.publish(reindex)
        return reindex
