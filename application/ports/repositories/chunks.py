"""Chunk truth rows: every chunk of a document and its index statuses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import ChunkIndexStatus, ChunkStatusMove


@attrs.frozen
class ChunkRecord:
    """One chunk truth row. Parents have `parent_id=None` and no index statuses (only
    children are embedded and indexed); children point at their parent.

    `chunk_id` is deterministic (document + span + text), so rebuilding the same Markdown
    with the same plan yields the same ids.
    """

    chunk_id: str
    scope: DocumentScope
    task_id: str
    parent_id: str | None
    order_index: int
    text: str
    section_path: tuple[str, ...]
    canonical_path: str
    structure_node_id: str | None
    node_type: str | None
    source_type: str
    span_start: int
    span_end: int
    dense_status: ChunkIndexStatus | None = None
    sparse_status: ChunkIndexStatus | None = None
    enabled: bool = True
    """False: switched off by its owner; in no index, skipped by indexing."""
    edited: bool = False
    """Its text was replaced by its owner (a re-chunking of the document drops edits)."""
    live: bool = True
    """Of the document's live lineage (the run that last reached SUCCESS). A run writes its
    own lineage (rows keyed by its `task_id`) not live; `swap_lineage` makes it live at
    SUCCESS, so the old version keeps answering until then."""

    @property
    def is_parent(self) -> bool:
        return self.parent_id is None


class ChunkRepository(Protocol):
    async def replace_document(self, scope: DocumentScope, chunks: Iterable[ChunkRecord]) -> None:
        """Delete every chunk of the document, insert `chunks` (same transaction). `chunks`
        is consumed once, in batches: a generator keeps a huge document's rows out of
        memory. A chunk outside `scope` raises ValueError (the caller rolls back)."""
        ...

    async def replace_lineage(
        self, scope: DocumentScope, lineage: str, chunks: Iterable[ChunkRecord]
    ) -> list[str]:
        """Delete the document's rows of `lineage` (a run's task id), insert `chunks` (same
        transaction, consumed once as by `replace_document`); other lineages stay as they
        are, the live one answering. Returns the ids of the children deleted (a resumed
        CHUNKING re-does its own lineage; their vectors must go)."""
        ...

    async def adopt_lineage(self, scope: DocumentScope, retried: str, lineage: str) -> int:
        """A retry that inherited CHUNKING continues the lineage of the run it retries:
        `UPDATE ... SET task_id=:lineage WHERE <document> AND task_id=:retried`; returns the
        rowcount (0: adopted already, by an earlier delivery of the same retry)."""
        ...

    async def swap_lineage(self, scope: DocumentScope, lineage: str) -> list[str]:
        """At the run's SUCCESS (same transaction): `lineage` becomes the document's live
        one (`live` FALSE -> TRUE, a compare-and-set whose rowcount is checked) and every
        other lineage's rows are deleted. Returns the deleted children's ids, so the caller
        removes them with ONE delete per index. A lineage without rows swaps nothing."""
        ...

    async def list_document(self, scope: DocumentScope) -> list[ChunkRecord]:
        """Every chunk row of the document, of every lineage, in order_index order."""
        ...

    async def list_children(
        self,
        scope: DocumentScope,
        *,
        after_order_index: int = -1,
        limit: int = 1000,
        lineage: str | None = None,
    ) -> list[ChunkRecord]:
        """One page of the document's enabled child chunks of `lineage` (None: the live
        one): order_index > `after_order_index`, in order_index order, at most `limit`.
        Indexing pages through its run's lineage with it, so a huge file never holds all
        its chunks in memory at once, and a disabled chunk is never indexed again."""
        ...

    async def list_parents(
        self, scope: DocumentScope, *, after_order_index: int = -1, limit: int = 50
    ) -> list[ChunkRecord]:
        """One page of the document's live parent chunks (order_index > `after_order_index`, in
        order_index order, at most `limit`): the keyset a chunk listing pages by."""
        ...

    async def children_of(
        self, scope: DocumentScope, parent_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        """Every live child (enabled or not) of these parents of the document, in order_index
        order."""
        ...

    async def set_enabled(self, scope: DocumentScope, chunk_id: str, *, enabled: bool) -> int:
        """`UPDATE ... SET enabled=:enabled WHERE <chunk> AND enabled = NOT :enabled`;
        returns the rowcount (0: no such chunk, or it already was so)."""
        ...

    async def replace_text(
        self, scope: DocumentScope, chunk_id: str, *, expected: str, text: str
    ) -> int:
        """A child's text from `expected` to `text` (compare-and-set on the old text), marked
        edited, both index statuses back to PENDING; returns the rowcount (0: no such child,
        or its text is no longer `expected`)."""
        ...

    async def get_many(
        self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        """The live chunks with these ids inside the tenant's dataset (others are never
        returned: search hydrates through this, so a run in flight never answers)."""
        ...

    async def move_dense(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        """`UPDATE ... SET dense_status=:to WHERE chunk_id IN :ids AND dense_status IN
        :allowed_from`; returns the rowcount (callers compare it with len(chunk_ids))."""
        ...

    async def move_sparse(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        """As `move_dense`, for sparse_status."""
        ...

    async def count_document(self, scope: DocumentScope) -> int:
        """How many live chunks the document has."""
        ...

    async def delete_document(self, scope: DocumentScope) -> int:
        """Delete every chunk row of the document; returns how many there were (0 when
        already gone: deleting twice is not an error)."""
        ...

    async def document_counts(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> Mapping[str, ChunkCounts]:
        """Live chunk counts per document of one dataset; a document without live chunks is
        absent."""
        ...

    async def count_user_vectors(self, user_id: str) -> int:
        """How many of the user's child chunks may have a dense vector stored: dense status
        INDEXING, SUCCESS or FAILED (a failed batch may have been partly upserted). The
        embedding dimension guard asks it."""
        ...

    async def list_user_children(
        self,
        user_id: str,
        *,
        first: str | None = None,
        last: str | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 1000,
    ) -> list[ChunkRecord]:
        """One page of the user's enabled, live child chunks (every dataset) whose dense vector is
        stored (dense_status SUCCESS), `first <= chunk_id <= last` when given, past `after` (the
        last page's (chunk_id, dataset_id)), in (chunk_id, dataset_id) order, at most
        `limit`: what a re-embedding copies (chunk ids are hex digests, so every store
        orders them alike)."""
        ...


@attrs.frozen
class ChunkCounts:
    parents: int = 0
    children: int = 0
    dense_indexed: int = 0  # children with dense_status SUCCESS
    sparse_indexed: int = 0  # children with sparse_status SUCCESS
