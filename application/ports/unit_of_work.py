"""Unit of work and repositories: the durable state of parse runs, chunks and results.

One `UnitOfWork` is one transaction. Nothing a repository writes is visible to others until
`commit()`; leaving the `async with` block without committing rolls back. Every status change
is a compare-and-set in storage (`UPDATE ... WHERE <allowed prior state>`) whose rowcount is
checked: a lost race raises `ConcurrentUpdate` (runs) or returns a count (chunk moves).
Datetimes passed in must be timezone-aware; they come back as aware UTC.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from types import TracebackType
from typing import Protocol, Self

import attrs

from ragline.application.ports.dependencies import DependencyUnavailable
from ragline.application.secrets import remember_secrets
from ragline.application.tasks import StoredTask, TaskResult
from ragline.domain.parse_batch import PageRange, ParseBatch, ParseTier, SourceRef
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    ChunkStatusMove,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
)


class PersistenceError(Exception):
    """The store failed (connection lost, constraint the caller did not expect, ...)."""


class DatabaseUnavailable(PersistenceError, DependencyUnavailable):
    """The database did not answer (connection refused or lost, timed out, locked)."""

    def __init__(self, detail: str) -> None:
        DependencyUnavailable.__init__(self, "database", detail)


class DuplicateTaskId(PersistenceError):
    """A run (or parsed log) with this task_id already exists: the idempotency barrier."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task_id already recorded: {task_id}")
        self.task_id = task_id


class ConcurrentUpdate(PersistenceError):
    """A compare-and-set matched no row: someone else changed the row since it was read."""


# -- parsed log ---------------------------------------------------------------------------


@attrs.frozen
class ParsedLog:
    """The snapshot of one task as received: the task and where its Markdown went.

    `id` is the store's integer key, sent back as `document_parsed_log_id`. `task` is the
    task as the edge decoded it (or why its body was no task), kept so a later retry or
    re-index can start from it and so `ragline status` can show it; the store keeps it as
    a plain record (`task_record`: canonical JSON in the SQL store).
    """

    id: int
    task_id: str
    task: StoredTask
    created_at: datetime
    retry_of_task_id: str | None = None
    parsed_bucket: str | None = None
    parsed_object_key: str | None = None
    parse_backend: str | None = None
    """The engine that really parsed the source (e.g. ``naive+tesseract``, ``mineru``)."""
    parse_warnings: tuple[str, ...] = ()
    """The parser's warnings (fallbacks, OCR'd pages, cut page ranges), in order."""
    source: MarkdownLocation | None = None
    """The object the task names as its source (None: a task that was not valid, whose
    references mean nothing). A delete never removes an object a live document's run names
    as its source (`ParseRunRepository.objects_in_use`)."""


class ParsedLogRepository(Protocol):
    async def add(
        self,
        task_id: str,
        task: StoredTask,
        created_at: datetime,
        retry_of_task_id: str | None = None,
        source: MarkdownLocation | None = None,
    ) -> ParsedLog:
        """Insert under the unique task_id (DuplicateTaskId if present) and return the row."""
        ...

    async def get(self, task_id: str) -> ParsedLog | None: ...

    async def set_parsed_location(self, task_id: str, bucket: str, object_key: str) -> None:
        """Record where the Markdown was written (after CLEANING uploads it)."""
        ...

    async def set_parse_outcome(
        self, task_id: str, backend: str, warnings: tuple[str, ...]
    ) -> None:
        """Record the engine that really parsed and its warnings (PersistenceError if the
        row is missing)."""
        ...


# -- parse runs ---------------------------------------------------------------------------


class ParseRunRepository(Protocol):
    async def add(self, run: ParseRun) -> None:
        """Insert a new run; DuplicateTaskId when its task_id exists."""
        ...

    async def get(self, task_id: str) -> ParseRun | None:
        """The stored run, rebuilt as the aggregate (no pending events)."""
        ...

    async def save(self, run: ParseRun, expected_version: int) -> None:
        """Write the run's whole state: `UPDATE ... WHERE task_id=:id AND version=:expected`.

        ConcurrentUpdate when the rowcount is not 1. `run.version` is the new version and
        must be greater than `expected_version` (ValueError otherwise): every domain command
        bumps it, so a save always changes the row.
        """
        ...

    async def mark_superseded(self, task_id: str, by_task_id: str) -> bool:
        """`UPDATE ... SET superseded_by_task_id=:by WHERE task_id=:id AND
        superseded_by_task_id IS NULL AND pipeline_status='FAILED'`; True iff rowcount == 1.

        The rowcount arbitrates concurrent retries of the same run (invariant 6 of
        docs/design/0002-run-state-machine.md). Also bumps the stored version so a stale aggregate
        cannot overwrite the mark.
        """
        ...

    async def list_unfinished(self, limit: int = 100) -> list[ParseRun]:
        """Runs still PENDING or PROCESSING (interrupted runs waiting for a redelivery)."""
        ...

    async def heartbeat(self, task_id: str, at: datetime) -> bool:
        """`UPDATE ... SET heartbeat_at=:at WHERE task_id=:id AND <unfinished>`: the worker
        running the run says it still is. True iff rowcount == 1 (False: the run ended, or
        a sweep converged it). Outside the aggregate: `save` never writes it, no version."""
        ...

    async def list_stale(self, before: datetime, limit: int = 100) -> list[str]:
        """task_ids of unfinished runs whose heartbeat (or, without one, created_at) is
        older than `before`, oldest first."""
        ...

    async def claim_stale(self, task_id: str, before: datetime, at: datetime) -> bool:
        """The sweep's compare-and-set: `SET heartbeat_at=:at WHERE task_id=:id AND
        <unfinished> AND coalesce(heartbeat_at, created_at) < :before`; True iff rowcount
        == 1. A worker's heartbeat since the listing makes it False; the row stays locked
        by this unit of work until it commits, so the sweep converges it alone."""
        ...

    async def list_recent(self, limit: int = 50) -> list[ParseRun]:
        """Newest runs first, for `ragline status`."""
        ...

    async def list_page(self, query: RunQuery, *, offset: int = 0, limit: int = 50) -> RunPage:
        """The runs matching `query`, newest first (created_at, then insertion order), from
        `offset`, at most `limit`; `total` counts every match. Runs of other users or
        datasets are never returned when the query names one."""
        ...

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
        """For each of `doc_ids` (one tenant scope), the newest run that owns the
        document's index: the newest run with `touched_index` (CHUNKING not PENDING), not
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


@attrs.frozen
class RunQuery:
    """Filters of `list_page`; None matches everything."""

    user_id: str | None = None
    dataset_id: str | None = None
    status: PipelineStatus | None = None
    doc_id: str | None = None  # the runs' original_file_id


@attrs.frozen
class RunPage:
    runs: list[ParseRun]
    total: int


@attrs.frozen
class DocumentPage:
    """One page of a dataset's documents: (doc_id, its newest run) in doc_id order."""

    latest: list[tuple[str, ParseRun]]
    total: int


# -- chunk truth rows ---------------------------------------------------------------------


@attrs.frozen
class DocumentScope:
    """Every chunk, index write and query is scoped by tenant and document."""

    user_id: str
    dataset_id: str
    doc_id: str


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

    @property
    def is_parent(self) -> bool:
        return self.parent_id is None


class ChunkRepository(Protocol):
    async def replace_document(self, scope: DocumentScope, chunks: Iterable[ChunkRecord]) -> None:
        """Delete every chunk of the document, insert `chunks` (same transaction). `chunks`
        is consumed once, in batches: a generator keeps a huge document's rows out of
        memory. A chunk outside `scope` raises ValueError (the caller rolls back)."""
        ...

    async def list_document(self, scope: DocumentScope) -> list[ChunkRecord]:
        """Every chunk of the document in order_index order (parents and children)."""
        ...

    async def list_children(
        self, scope: DocumentScope, *, after_order_index: int = -1, limit: int = 1000
    ) -> list[ChunkRecord]:
        """One page of the document's child chunks: order_index > `after_order_index`, in
        order_index order, at most `limit`. Indexing pages through a document with it, so a
        huge file never holds all its chunks in memory at once."""
        ...

    async def get_many(
        self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        """The chunks with these ids inside the tenant's dataset (others are never returned)."""
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

    async def count_document(self, scope: DocumentScope) -> int: ...

    async def delete_document(self, scope: DocumentScope) -> int:
        """Delete every chunk row of the document; returns how many there were (0 when
        already gone: deleting twice is not an error)."""
        ...

    async def document_counts(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> Mapping[str, ChunkCounts]:
        """Chunk counts per document of one dataset; a document without chunks is absent."""
        ...

    async def count_user_vectors(self, user_id: str) -> int:
        """How many of the user's child chunks may have a dense vector stored: dense status
        INDEXING, SUCCESS or FAILED (a failed batch may have been partly upserted). The
        embedding dimension guard asks it."""
        ...


@attrs.frozen
class ChunkCounts:
    parents: int = 0
    children: int = 0
    dense_indexed: int = 0  # children with dense_status SUCCESS
    sparse_indexed: int = 0  # children with sparse_status SUCCESS


# -- user model configuration -------------------------------------------------------------


@attrs.frozen
class EmbeddingConfig:
    """A user's default EMBEDDING model. `api_key` is plaintext here only: storage keeps it
    encrypted at rest and it is never logged (`repr=False`); a config holding one teaches the
    process's secret mask that key, so no text ragline forms can carry it."""

    user_id: str
    provider: str
    model: str
    dimension: int
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        remember_secrets(self.api_key)


class ModelKind(StrEnum):
    EMBEDDING = "EMBEDDING"
    CHAT = "CHAT"


@attrs.frozen
class ChatConfig:
    """A user's default CHAT model (no dimension). `api_key` as in EmbeddingConfig."""

    user_id: str
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        remember_secrets(self.api_key)


class ModelConfigRepository(Protocol):
    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None: ...

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        """Insert or replace the user's default EMBEDDING config."""
        ...

    async def default_chat(self, user_id: str) -> ChatConfig | None: ...

    async def put_default_chat(self, config: ChatConfig) -> None:
        """Insert or replace the user's default CHAT config."""
        ...

    async def delete_default(self, user_id: str, kind: ModelKind) -> bool:
        """Delete the user's default config of `kind`; True iff a row was deleted."""
        ...


# -- transactional outbox -----------------------------------------------------------------


@attrs.frozen
class OutboxMessage:
    """A result waiting to be published; written in the same transaction as the terminal
    state, so a crash between commit and publish loses nothing."""

    id: int
    task_id: str
    topic: str
    routing_key: str
    result: TaskResult
    attempts: int
    next_attempt_at: datetime
    status: str  # PENDING | SENT | DEAD
    last_error: str | None = None
    claimed_by: str | None = None  # the relay pass holding the row, until `claimed_until`
    claimed_until: datetime | None = None
    updated_at: datetime | None = None


class OutboxRepository(Protocol):
    async def put(self, result: TaskResult, topic: str, at: datetime) -> None:
        """One row per task_id: insert it PENDING, or set an existing row back to PENDING with
        the new result (a redelivered terminal task re-sends its result). The result is
        kept as a value; the relay's publisher writes its message."""
        ...

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        """PENDING rows whose next_attempt_at <= now, oldest first (a read: no claim)."""
        ...

    async def claim(
        self, now: datetime, until: datetime, owner: str, limit: int = 100
    ) -> list[OutboxMessage]:
        """Claim up to `limit` due PENDING rows whose claim is free or expired
        (`claimed_until` <= now): set `claimed_by=owner`, `claimed_until=until` and return
        them, oldest first. Concurrent claims (other units of work) never return the same
        row while its claim lasts: PostgreSQL/MySQL pick rows `FOR UPDATE SKIP LOCKED`,
        SQLite serialises writers; the UPDATE is a compare-and-set on (PENDING, claim free
        or expired). `owner` should be unique per claim (the rows are read back by it).
        The claim takes effect on commit."""
        ...

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        """CAS PENDING -> SENT where attempts matches; True iff rowcount == 1. Clears
        `last_error` (a redriven row keeps its DEAD reason only until it is sent). Every
        mark also clears the claim."""
        ...

    async def mark_retry(
        self, message_id: int, attempts: int, next_attempt_at: datetime, error: str
    ) -> bool:
        """CAS: still PENDING with `attempts`; store attempts+1, the next time and the error."""
        ...

    async def mark_dead(self, message_id: int, attempts: int, error: str) -> bool:
        """CAS PENDING -> DEAD (dead-lettered after the last attempt)."""
        ...

    async def get(self, task_id: str) -> OutboxMessage | None: ...

    async def list_messages(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        """Rows with id > `after_id` (in id order, at most `limit`), of one status and/or
        one task when given: what an operator pages through."""
        ...

    async def count_by_status(self) -> Mapping[str, int]:
        """How many rows each status has (a status without rows is absent)."""
        ...

    async def redrive(self, task_id: str, at: datetime) -> bool:
        """CAS DEAD -> PENDING: `UPDATE ... SET status='PENDING', attempts=0,
        next_attempt_at=:at WHERE task_id=:id AND status='DEAD'`; True iff rowcount == 1.
        `last_error` is kept until the next attempt replaces it."""
        ...


# -- parse batches (the parse cache) -----------------------------------------------------


@attrs.frozen
class NewParseBatch:
    """A batch the planning rule decided to create (pending; the store gives the id)."""

    sha256: str
    tier: ParseTier
    page_range: PageRange
    priority: int
    source: SourceRef
    created_at: datetime
    page_count: int | None = None  # pages of the whole file
    source_tag: str | None = None  # domain.parse_batch.source_tag of the source's version
    requested_backend: str | None = None  # the pdf_parser_backend the request asked for


class ParseBatchRepository(Protocol):
    async def lock_document(self, sha256: str, tier: ParseTier) -> None:
        """Serialize planning of one (sha256, tier) until this unit of work ends, so two
        concurrent requests cannot both create a batch for the same pages (a row lock on
        PostgreSQL/MariaDB; SQLite's write transaction already serializes)."""
        ...

    async def list_for(self, sha256: str, tier: ParseTier) -> list[ParseBatch]:
        """Every batch of (sha256, tier), any status, by id."""
        ...

    async def add(self, batch: NewParseBatch) -> ParseBatch:
        """Insert a pending batch and return it with its new id."""
        ...

    async def get_many(self, ids: Sequence[int]) -> list[ParseBatch]:
        """The batches with these ids, in the order asked (unknown ids are left out)."""
        ...

    async def raise_priority(self, batch_id: int, priority: int) -> bool:
        """`UPDATE ... SET priority=:p WHERE id=:id AND status IN (pending, parsing) AND
        priority < :p`; True iff a row changed."""
        ...

    async def claim_next(
        self,
        owner: str,
        now: datetime,
        lease_until: datetime,
        *,
        ids: Sequence[int] | None = None,
    ) -> ParseBatch | None:
        """Claim the most urgent claimable batch (pending, or parsing with `lease_until <=
        now`) — by priority, then id; among `ids` only when given. A compare-and-set on
        (id, claims) that moves it to parsing under `owner` and bumps `claims`: two workers
        never both win one batch. None when nothing is claimable."""
        ...

    async def renew(self, batch_id: int, owner: str, claims: int, lease_until: datetime) -> bool:
        """Extend the lease of a claim still held (parsing, same owner and claims)."""
        ...

    async def finish(
        self,
        batch_id: int,
        owner: str,
        claims: int,
        done_at: datetime,
        backend: str,
        warnings: Sequence[str] = (),
    ) -> bool:
        """CAS parsing (owner, claims) -> done with the backend that parsed it and the
        parser's warnings; False when the claim was lost."""
        ...

    async def fail(
        self, batch_id: int, owner: str, claims: int, at: datetime, code: str, message: str
    ) -> bool:
        """CAS parsing (owner, claims) -> failed with the code and message."""
        ...

    async def release(self, batch_id: int, owner: str, claims: int) -> bool:
        """CAS parsing (owner, claims) -> pending, no owner, no lease: a worker that stops
        mid-parse (Ctrl-C, shutdown) gives the batch back instead of letting its lease lapse."""
        ...

    async def held_by_prefix(self, prefix: str) -> list[ParseBatch]:
        """The batches being parsed under an owner whose name starts with `prefix` (taken
        literally: `%` and `_` are no wildcards), by id: the claims of one host's workers,
        for the release of those a dead process left behind."""
        ...

    async def find_by_source_tag(self, tag: str) -> ParseBatch | None:
        """The newest batch planned for this stored version of an object (any tier,
        status), or None: it knows the object's sha256 and page count."""
        ...

    async def latest_source(self, sha256: str) -> SourceRef | None:
        """Where the newest batch of these bytes found them (any tier), or None."""
        ...

    # -- holdings: who may see the batches of which bytes (application/access/parse_cache.py)

    async def add_holder(self, sha256: str, user_id: str) -> None:
        """Record that `user_id` holds these bytes: insert if absent, so adding a pair again
        (or from two units of work at once) is no error. Holdings are never removed."""
        ...

    async def held_by(self, user_id: str, sha256s: Iterable[str]) -> set[str]:
        """The sha256s among `sha256s` that `user_id` holds (its own uncommitted adds too)."""
        ...


# -- the unit of work ---------------------------------------------------------------------


class UnitOfWork(Protocol):
    # read-only: an adapter's unit of work holds its own repository types
    @property
    def parsed_logs(self) -> ParsedLogRepository: ...

    @property
    def runs(self) -> ParseRunRepository: ...

    @property
    def chunks(self) -> ChunkRepository: ...

    @property
    def model_configs(self) -> ModelConfigRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def parse_batches(self) -> ParseBatchRepository: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back whatever was not committed, release the connection."""
        ...

    async def commit(self) -> None: ...

    async def rollback(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self) -> UnitOfWork:
        """A new unit of work (one transaction on its own connection)."""
        ...
