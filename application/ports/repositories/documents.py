"""The documents view: a dataset's documents, each seen through its newest runs.

A read model over the parse-run rows (the deletion mark is its one write, outside the
aggregate): which documents a dataset has, which run owns a document's index, which stored
objects a live document still names. Beside it, each document's metadata (its own table,
written by compare-and-set on a version).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import attrs

from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import MarkdownLocation, ParseRun


class DocumentRepository(Protocol):
    async def latest_per_document(
        self, user_id: str, dataset_id: str, *, offset: int = 0, limit: int = 50
    ) -> DocumentPage:
        """The documents (original_file_id) a dataset has runs for, each with its newest
        run, ordered by doc_id; `total` counts the documents. A document whose newest run
        is marked deleted (`mark_document_deleted`) is left out."""
        ...

    async def latest_for_document(
        self, user_id: str, dataset_id: str, doc_id: str
    ) -> ParseRun | None:
        """The newest run of one document in one tenant scope, or None (also when that run
        is marked deleted)."""
        ...

    async def index_owners(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> dict[str, ParseRun]:
        """For each of `doc_ids` (one tenant scope), the run that owns the document's
        index: the newest SUCCESS run with `touched_index` (its chunk lineage is the live
        one), else the newest run with `touched_index` (CHUNKING not PENDING); never one
        marked deleted. A document none of whose runs got that far is absent."""
        ...

    async def mark_document_deleted(
        self, user_id: str, dataset_id: str, doc_id: str, at: datetime
    ) -> int:
        """`UPDATE ... SET document_deleted_at=:at WHERE <the document's runs> AND
        document_deleted_at IS NULL`; returns the rowcount (0: already marked, or no runs).
        The mark is outside the aggregate: `save` never writes or clears it, and a later
        run of the document (a new upload) is not marked, so the document is listed again."""
        ...

    async def objects_in_use(
        self, objects: Sequence[MarkdownLocation], besides: DocumentScope
    ) -> set[MarkdownLocation]:
        """Which of `objects` some run still names, other than as the Markdown ragline wrote
        for document `besides` (the one being deleted): a run of any other document not
        marked deleted — of any tenant — that names it as its source (its parsed log's) or
        its Markdown, or a run of `besides` that converted it as its source (file_type not
        md/markdown: a re-index run's source is the document's own converted Markdown)."""
        ...

    async def metadata_of(self, scope: DocumentScope) -> StoredMetadata | None:
        """The document's metadata and its version, or None if none was ever set."""
        ...

    async def put_metadata(
        self, scope: DocumentScope, metadata: DocumentMetadata, *, expected_version: int
    ) -> int:
        """Compare-and-set: `expected_version` 0 inserts the row at version 1 (0 if a row
        exists already); otherwise `UPDATE ... SET version = version + 1 WHERE version =
        :expected_version`. Returns the rowcount (0: someone else wrote first)."""
        ...


@attrs.frozen
class StoredMetadata:
    """A document's metadata as stored; `version` grows by one with every write."""

    metadata: DocumentMetadata
    version: int


@attrs.frozen
class DocumentPage:
    """One page of a dataset's documents: (doc_id, its newest run) in doc_id order."""

    latest: list[tuple[str, ParseRun]]
    total: int
