"""In-memory UnitOfWork with the storage semantics of the real adapters.

- Uncommitted writes live in the unit of work; others see only committed state.
- A writer locks each row it writes (run / parsed log / outbox by task_id, chunks by
  document) until commit or rollback; another writer of the same row waits, then evaluates
  its compare-and-set against the newly committed row (read-committed + row locks, as
  PostgreSQL and InnoDB do). That is what makes `mark_superseded` a real arbiter.
- `runs.save` is a version CAS (and refuses, with ValueError, a run not newer than the
  expected version); `mark_superseded` returns the rowcount as a bool; chunk moves count
  only rows whose status is in the move's allowed prior states, and refuse (ValueError) a
  move whose target is among them.
- Times are stored as aware UTC (a naive datetime is refused with PersistenceError), so
  what comes back compares equal to what went in and is in UTC, as from the SQL adapter.
- Holds `UnitOfWorkContract` (tests/fakes/test_fakes_hold_the_kits.py); not
  `EncryptedApiKeysContract`: API keys are kept in plain text, there is no secret.
- Faults: `db.faults.arm("uow.commit", error)` and friends ("uow.<repository>.<method>").
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import attrs

from ragline.application.ports.unit_of_work import (
    ChatConfig,
    ChunkCounts,
    ChunkRecord,
    ConcurrentUpdate,
    DatabaseUnavailable,
    DocumentPage,
    DocumentScope,
    DuplicateTaskId,
    EmbeddingConfig,
    ModelKind,
    NewParseBatch,
    OutboxMessage,
    ParsedLog,
    PersistenceError,
    RunPage,
    RunQuery,
)
from ragline.application.tasks import StoredTask, TaskResult
from ragline.domain.parse_batch import (
    BatchStatus,
    IllegalBatchMove,
    ParseBatch,
    ParseTier,
    SourceRef,
)
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    ChunkStatusMove,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
)
from tests.fakes.faults import Faults

LOCK_TIMEOUT_SECONDS = 5.0


def snapshot(run: ParseRun) -> ParseRun:
    """An independent copy of a run without pending events (what storage would return)."""
    return attrs.evolve(run, stages=dict(run.stages))


def utc(value: datetime) -> datetime:
    """The time as stored: aware UTC; a naive datetime is refused like the SQL adapter does."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise PersistenceError(f"naive datetime refused (store aware UTC times): {value!r}")
    return value.astimezone(UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def stored(run: ParseRun) -> ParseRun:
    """The row written for `run`: a snapshot with every time in UTC."""
    stages = {
        stage: attrs.evolve(
            state,
            started_at=_utc_or_none(state.started_at),
            finished_at=_utc_or_none(state.finished_at),
        )
        for stage, state in run.stages.items()
    }
    return attrs.evolve(
        run,
        stages=stages,
        created_at=utc(run.created_at),
        started_at=_utc_or_none(run.started_at),
        finished_at=_utc_or_none(run.finished_at),
    )


class FakeDatabase:
    """The committed state, shared by every unit of work."""

    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.answering = True  # False: every unit of work meets DatabaseUnavailable
        self.parsed_logs: dict[str, ParsedLog] = {}
        self.runs: dict[str, ParseRun] = {}
        self.run_order: dict[str, int] = {}  # task_id -> insertion order (the SQL id)
        self.document_deleted_at: dict[str, datetime] = {}  # task_id -> the tombstone
        self.heartbeats: dict[str, datetime] = {}  # task_id -> heartbeat_at
        self.chunks: dict[DocumentScope, dict[str, ChunkRecord]] = {}
        self.configs: dict[str, EmbeddingConfig] = {}
        self.chat_configs: dict[str, ChatConfig] = {}
        self.outbox: dict[str, OutboxMessage] = {}
        self.parse_batches: dict[int, ParseBatch] = {}
        self._batch_ids = itertools.count(1)
        self.source_tags: dict[int, str | None] = {}  # batch id -> source_tag (a column)
        self.parse_holdings: set[tuple[str, str]] = set()  # (user_id, sha256)
        self.outbox_puts: Counter[str] = Counter()  # committed outbox.put calls per task_id
        self.commits = 0
        self.units_opened = 0  # units of work asked of the factory
        self._log_ids = itertools.count(1)
        self._outbox_ids = itertools.count(1)
        self._locks: dict[tuple[str, object], object] = {}
        self._condition: asyncio.Condition | None = None

    def __call__(self) -> FakeUnitOfWork:
        """The UnitOfWorkFactory."""
        self.units_opened += 1
        return FakeUnitOfWork(self)

    # -- row locks ----------------------------------------------------------------------

    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition

    async def lock(self, key: tuple[str, object], owner: object) -> None:
        cond = self._cond()
        async with cond:
            try:
                await asyncio.wait_for(
                    cond.wait_for(lambda: self._locks.get(key) in (None, owner)),
                    LOCK_TIMEOUT_SECONDS,
                )
            except TimeoutError:
                raise PersistenceError(f"lock wait timeout on {key}") from None
            self._locks[key] = owner

    async def try_lock(self, key: tuple[str, object], owner: object) -> bool:
        """SKIP LOCKED: take the row lock if it is free (or ours), else say no at once."""
        async with self._cond():
            if self._locks.get(key) not in (None, owner):
                return False
            self._locks[key] = owner
            return True

    async def release(self, owner: object) -> None:
        cond = self._cond()
        async with cond:
            for key in [k for k, v in self._locks.items() if v is owner]:
                del self._locks[key]
            cond.notify_all()

    @property
    def locked(self) -> int:
        return len(self._locks)

    # -- helpers for tests ----------------------------------------------------------------

    def chunks_of(self, scope: DocumentScope) -> list[ChunkRecord]:
        return sorted(self.chunks.get(scope, {}).values(), key=lambda c: c.order_index)

    def outbox_row(self, task_id: str) -> OutboxMessage | None:
        return self.outbox.get(task_id)


class _Repo:
    def __init__(self, uow: FakeUnitOfWork) -> None:
        self.uow = uow
        self.db = uow.db

    async def check(self, name: str) -> None:
        """Every statement yields to the loop once, so concurrent units of work interleave
        the way separate connections do."""
        self.uow.require_active()
        self.db.faults.check(f"uow.{name}")
        await asyncio.sleep(0)


class FakeParsedLogs(_Repo):
    async def add(
        self,
        task_id: str,
        task: StoredTask,
        created_at: datetime,
        retry_of_task_id: str | None = None,
        source: MarkdownLocation | None = None,
    ) -> ParsedLog:
        await self.check("parsed_logs.add")
        await self.uow.lock(("log", task_id))
        if task_id in self.uow.pending_logs or task_id in self.db.parsed_logs:
            raise DuplicateTaskId(task_id)
        row = ParsedLog(
            next(self.db._log_ids),
            task_id,
            task,
            utc(created_at),
            retry_of_task_id,
            source=source,
        )
        self.uow.pending_logs[task_id] = row
        return row

    async def get(self, task_id: str) -> ParsedLog | None:
        await self.check("parsed_logs.get")
        return self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)

    async def set_parsed_location(self, task_id: str, bucket: str, object_key: str) -> None:
        await self.check("parsed_logs.set_parsed_location")
        await self.uow.lock(("log", task_id))
        row = self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)
        if row is None:
            raise PersistenceError(f"no parsed log for {task_id}")
        self.uow.pending_logs[task_id] = attrs.evolve(
            row, parsed_bucket=bucket, parsed_object_key=object_key
        )

    async def set_parse_outcome(
        self, task_id: str, backend: str, warnings: tuple[str, ...]
    ) -> None:
        await self.check("parsed_logs.set_parse_outcome")
        await self.uow.lock(("log", task_id))
        row = self.uow.pending_logs.get(task_id) or self.db.parsed_logs.get(task_id)
        if row is None:
            raise PersistenceError(f"no parsed log for {task_id}")
        self.uow.pending_logs[task_id] = attrs.evolve(
            row, parse_backend=backend[:64], parse_warnings=tuple(warnings)
        )


_UNFINISHED = (PipelineStatus.PENDING, PipelineStatus.PROCESSING)


class FakeRuns(_Repo):
    def _current(self, task_id: str) -> ParseRun | None:
        return self.uow.pending_runs.get(task_id) or self.db.runs.get(task_id)

    async def add(self, run: ParseRun) -> None:
        await self.check("runs.add")
        await self.uow.lock(("run", run.task_id))
        row = stored(run)
        if self._current(run.task_id) is not None:
            raise DuplicateTaskId(run.task_id)
        self.uow.pending_runs[run.task_id] = row
        self.db.run_order.setdefault(run.task_id, len(self.db.run_order))

    async def get(self, task_id: str) -> ParseRun | None:
        await self.check("runs.get")
        current = self._current(task_id)
        return snapshot(current) if current is not None else None

    async def save(self, run: ParseRun, expected_version: int) -> None:
        await self.check("runs.save")
        if run.version <= expected_version:
            raise ValueError(
                f"run {run.task_id} version {run.version} is not newer than {expected_version}"
            )
        row = stored(run)
        await self.uow.lock(("run", run.task_id))
        current = self._current(run.task_id)
        if current is None or current.version != expected_version:
            found = None if current is None else current.version
            raise ConcurrentUpdate(
                f"run {run.task_id}: expected version {expected_version}, found {found}"
            )
        self.uow.pending_runs[run.task_id] = row

    async def mark_superseded(self, task_id: str, by_task_id: str) -> bool:
        await self.check("runs.mark_superseded")
        await self.uow.lock(("run", task_id))
        current = self._current(task_id)
        if (
            current is None
            or current.superseded_by_task_id is not None
            or current.pipeline_status is not PipelineStatus.FAILED
        ):
            return False
        marked = snapshot(current)
        marked.superseded_by_task_id = by_task_id
        marked.version += 1
        self.uow.pending_runs[task_id] = marked
        return True

    def _sign_of_life(self, run: ParseRun) -> datetime:
        beat = self.uow.pending_heartbeats.get(run.task_id) or self.db.heartbeats.get(run.task_id)
        return beat if beat is not None else run.created_at

    async def _touch(self, task_id: str, at: datetime, before: datetime | None) -> bool:
        at = utc(at)
        await self.uow.lock(("run", task_id))
        current = self._current(task_id)
        if current is None or current.pipeline_status not in _UNFINISHED:
            return False
        if before is not None and not self._sign_of_life(current) < utc(before):
            return False
        self.uow.pending_heartbeats[task_id] = at
        return True

    async def heartbeat(self, task_id: str, at: datetime) -> bool:
        await self.check("runs.heartbeat")
        return await self._touch(task_id, at, None)

    async def list_stale(self, before: datetime, limit: int = 100) -> list[str]:
        await self.check("runs.list_stale")
        before = utc(before)
        stale = [
            r
            for r in self._all()
            if r.pipeline_status in _UNFINISHED and self._sign_of_life(r) < before
        ]
        stale.sort(key=lambda r: (self._sign_of_life(r), self.db.run_order.get(r.task_id, 0)))
        return [r.task_id for r in stale[:limit]]

    async def claim_stale(self, task_id: str, before: datetime, at: datetime) -> bool:
        await self.check("runs.claim_stale")
        return await self._touch(task_id, at, before)

    def _all(self) -> list[ParseRun]:
        merged = dict(self.db.runs) | self.uow.pending_runs
        return [snapshot(r) for r in merged.values()]

    async def list_unfinished(self, limit: int = 100) -> list[ParseRun]:
        await self.check("runs.list_unfinished")
        return [r for r in self._all() if not r.is_terminal][:limit]

    async def list_recent(self, limit: int = 50) -> list[ParseRun]:
        await self.check("runs.list_recent")
        return sorted(self._all(), key=lambda r: r.created_at, reverse=True)[:limit]

    def _newest_first(self, runs: Iterable[ParseRun]) -> list[ParseRun]:
        order = self.db.run_order
        return sorted(runs, key=lambda r: (r.created_at, order.get(r.task_id, 0)), reverse=True)

    async def list_page(self, query: RunQuery, *, offset: int = 0, limit: int = 50) -> RunPage:
        await self.check("runs.list_page")
        matching = [
            r
            for r in self._all()
            if (query.user_id is None or r.identity.user_id == query.user_id)
            and (query.dataset_id is None or r.identity.dataset_id == query.dataset_id)
            and (query.status is None or r.pipeline_status is query.status)
            and (query.doc_id is None or r.identity.original_file_id == query.doc_id)
        ]
        return RunPage(self._newest_first(matching)[offset : offset + limit], len(matching))

    def _latest_by_document(self, user_id: str, dataset_id: str) -> dict[str, ParseRun]:
        order = self.db.run_order
        latest: dict[str, ParseRun] = {}
        for run in self._all():
            identity = run.identity
            if identity.user_id != user_id or identity.dataset_id != dataset_id:
                continue
            doc = identity.original_file_id
            best = latest.get(doc)
            if best is None or order.get(run.task_id, 0) > order.get(best.task_id, 0):
                latest[doc] = run
        return latest

    def _deleted(self, task_id: str) -> bool:
        return task_id in self.uow.pending_tombstones or task_id in self.db.document_deleted_at

    def _live_documents(self, user_id: str, dataset_id: str) -> dict[str, ParseRun]:
        latest = self._latest_by_document(user_id, dataset_id)
        return {doc: run for doc, run in latest.items() if not self._deleted(run.task_id)}

    async def latest_per_document(
        self, user_id: str, dataset_id: str, *, offset: int = 0, limit: int = 50
    ) -> DocumentPage:
        await self.check("runs.latest_per_document")
        latest = self._live_documents(user_id, dataset_id)
        docs = sorted(latest)[offset : offset + limit]
        return DocumentPage([(doc, latest[doc]) for doc in docs], len(latest))

    async def latest_for_document(
        self, user_id: str, dataset_id: str, doc_id: str
    ) -> ParseRun | None:
        await self.check("runs.latest_for_document")
        return self._live_documents(user_id, dataset_id).get(doc_id)

    async def index_owners(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> dict[str, ParseRun]:
        await self.check("runs.index_owners")
        order, wanted = self.db.run_order, set(doc_ids)
        owners: dict[str, ParseRun] = {}
        for run in self._all():
            identity = run.identity
            doc = identity.original_file_id
            if (
                identity.user_id != user_id
                or identity.dataset_id != dataset_id
                or doc not in wanted
                or not run.touched_index
                or self._deleted(run.task_id)
            ):
                continue
            best = owners.get(doc)
            if best is None or order.get(run.task_id, 0) > order.get(best.task_id, 0):
                owners[doc] = run
        return owners

    async def mark_document_deleted(
        self, user_id: str, dataset_id: str, doc_id: str, at: datetime
    ) -> int:
        await self.check("runs.mark_document_deleted")
        at = utc(at)
        marked = 0
        for run in self._all():
            identity = run.identity
            if (identity.user_id, identity.dataset_id, identity.original_file_id) != (
                user_id,
                dataset_id,
                doc_id,
            ):
                continue
            await self.uow.lock(("run", run.task_id))
            if not self._deleted(run.task_id):
                self.uow.pending_tombstones[run.task_id] = at
                marked += 1
        return marked

    async def objects_in_use(
        self, objects: Sequence[MarkdownLocation], besides: DocumentScope
    ) -> set[MarkdownLocation]:
        await self.check("runs.objects_in_use")
        wanted = set(objects)
        logs = {**self.db.parsed_logs, **self.uow.pending_logs}
        found: set[MarkdownLocation] = set()
        for run in self._all():
            identity = run.identity
            log = logs.get(run.task_id)
            source = None if log is None else log.source
            same = (identity.user_id, identity.dataset_id, identity.original_file_id) == (
                besides.user_id,
                besides.dataset_id,
                besides.doc_id,
            )
            if same:
                converting = identity.file_type.lower() not in ("md", "markdown")
                named = [source] if converting else []
            elif self._deleted(run.task_id):
                named = []
            else:
                named = [source, run.markdown]
            found.update(o for o in named if o is not None and o in wanted)
        return found


class FakeChunks(_Repo):
    def _doc(self, scope: DocumentScope) -> dict[str, ChunkRecord]:
        if scope in self.uow.pending_chunks:
            return self.uow.pending_chunks[scope]
        return self.db.chunks.get(scope, {})

    async def _writable(self, scope: DocumentScope) -> dict[str, ChunkRecord]:
        await self.uow.lock(("chunks", scope))
        if scope not in self.uow.pending_chunks:
            self.uow.pending_chunks[scope] = dict(self.db.chunks.get(scope, {}))
        return self.uow.pending_chunks[scope]

    async def replace_document(self, scope: DocumentScope, chunks: Iterable[ChunkRecord]) -> None:
        await self.check("chunks.replace_document")
        await self._writable(scope)
        rows: dict[str, ChunkRecord] = {}
        for chunk in chunks:
            if chunk.scope != scope:
                raise ValueError(f"chunk {chunk.chunk_id} is outside {scope}")
            if chunk.chunk_id in rows:
                raise PersistenceError(f"duplicate chunk_id {chunk.chunk_id}")
            rows[chunk.chunk_id] = chunk
        self.uow.pending_chunks[scope] = rows

    async def list_document(self, scope: DocumentScope) -> list[ChunkRecord]:
        await self.check("chunks.list_document")
        return sorted(self._doc(scope).values(), key=lambda c: c.order_index)

    async def list_children(
        self, scope: DocumentScope, *, after_order_index: int = -1, limit: int = 1000
    ) -> list[ChunkRecord]:
        await self.check("chunks.list_children")
        later = [
            c
            for c in self._doc(scope).values()
            if not c.is_parent and c.order_index > after_order_index
        ]
        return sorted(later, key=lambda c: c.order_index)[:limit]

    async def get_many(
        self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]
    ) -> list[ChunkRecord]:
        await self.check("chunks.get_many")
        wanted = set(chunk_ids)
        scopes = set(self.db.chunks) | set(self.uow.pending_chunks)
        found: dict[str, ChunkRecord] = {}
        for scope in scopes:
            if scope.user_id == user_id and scope.dataset_id == dataset_id:
                found.update(
                    (c.chunk_id, c) for c in self._doc(scope).values() if c.chunk_id in wanted
                )
        return [found[i] for i in dict.fromkeys(chunk_ids) if i in found]  # in the order asked

    async def _move(
        self, scope: DocumentScope, ids: Iterable[str], move: ChunkStatusMove, field: str
    ) -> int:
        if move.to in move.allowed_from:
            raise ValueError(f"{move.name} would leave some rows unchanged; not a real move")
        rows = await self._writable(scope)
        moved = 0
        for chunk_id in set(ids):
            row = rows.get(chunk_id)
            status = getattr(row, field) if row is not None else None
            if row is not None and status is not None and move.permits(status):
                rows[chunk_id] = attrs.evolve(row, **{field: move.to})
                moved += 1
        return moved

    async def move_dense(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        await self.check("chunks.move_dense")
        return await self._move(scope, chunk_ids, move, "dense_status")

    async def move_sparse(
        self, scope: DocumentScope, chunk_ids: Sequence[str], move: ChunkStatusMove
    ) -> int:
        await self.check("chunks.move_sparse")
        return await self._move(scope, chunk_ids, move, "sparse_status")

    async def count_document(self, scope: DocumentScope) -> int:
        await self.check("chunks.count_document")
        return len(self._doc(scope))

    async def delete_document(self, scope: DocumentScope) -> int:
        await self.check("chunks.delete_document")
        rows = await self._writable(scope)
        self.uow.pending_chunks[scope] = {}
        return len(rows)

    def _scopes(self) -> set[DocumentScope]:
        return set(self.db.chunks) | set(self.uow.pending_chunks)

    async def document_counts(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> Mapping[str, ChunkCounts]:
        await self.check("chunks.document_counts")
        success = ChunkIndexStatus.SUCCESS
        counts: dict[str, ChunkCounts] = {}
        for doc_id in dict.fromkeys(doc_ids):
            rows = list(self._doc(DocumentScope(user_id, dataset_id, doc_id)).values())
            if rows:
                counts[doc_id] = ChunkCounts(
                    parents=sum(1 for c in rows if c.is_parent),
                    children=sum(1 for c in rows if not c.is_parent),
                    dense_indexed=sum(1 for c in rows if c.dense_status is success),
                    sparse_indexed=sum(1 for c in rows if c.sparse_status is success),
                )
        return counts

    async def count_user_vectors(self, user_id: str) -> int:
        await self.check("chunks.count_user_vectors")
        may_exist = (ChunkIndexStatus.INDEXING, ChunkIndexStatus.SUCCESS, ChunkIndexStatus.FAILED)
        return sum(
            1
            for scope in self._scopes()
            if scope.user_id == user_id
            for c in self._doc(scope).values()
            if c.dense_status in may_exist
        )


class FakeModelConfigs(_Repo):
    """Pending writes are keyed by (kind, user_id); a pending None is a delete."""

    def _get(self, kind: ModelKind, user_id: str) -> EmbeddingConfig | ChatConfig | None:
        pending = self.uow.pending_configs
        if (kind, user_id) in pending:
            return pending[kind, user_id]
        committed = self.db.configs if kind is ModelKind.EMBEDDING else self.db.chat_configs
        return committed.get(user_id)

    async def default_embedding(self, user_id: str) -> EmbeddingConfig | None:
        await self.check("model_configs.default_embedding")
        found = self._get(ModelKind.EMBEDDING, user_id)
        assert found is None or isinstance(found, EmbeddingConfig)
        return found

    async def put_default_embedding(self, config: EmbeddingConfig) -> None:
        await self.check("model_configs.put_default_embedding")
        await self.uow.lock(("config", ModelKind.EMBEDDING, config.user_id))
        self.uow.pending_configs[ModelKind.EMBEDDING, config.user_id] = config

    async def default_chat(self, user_id: str) -> ChatConfig | None:
        await self.check("model_configs.default_chat")
        found = self._get(ModelKind.CHAT, user_id)
        assert found is None or isinstance(found, ChatConfig)
        return found

    async def put_default_chat(self, config: ChatConfig) -> None:
        await self.check("model_configs.put_default_chat")
        await self.uow.lock(("config", ModelKind.CHAT, config.user_id))
        self.uow.pending_configs[ModelKind.CHAT, config.user_id] = config

    async def delete_default(self, user_id: str, kind: ModelKind) -> bool:
        await self.check("model_configs.delete_default")
        await self.uow.lock(("config", kind, user_id))
        existed = self._get(kind, user_id) is not None
        self.uow.pending_configs[kind, user_id] = None
        return existed


def _claimable(row: OutboxMessage, now: datetime) -> bool:
    due = row.status == "PENDING" and row.next_attempt_at <= now
    return due and (row.claimed_until is None or row.claimed_until <= now)


class FakeOutbox(_Repo):
    def _row(self, task_id: str) -> OutboxMessage | None:
        return self.uow.pending_outbox.get(task_id) or self.db.outbox.get(task_id)

    def _by_id(self, message_id: int) -> OutboxMessage | None:
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        return next((m for m in merged.values() if m.id == message_id), None)

    async def put(self, result: TaskResult, topic: str, at: datetime) -> None:
        await self.check("outbox.put")
        task_id, routing_key = result.task_id, result.routing_key
        at = utc(at)
        await self.uow.lock(("outbox", task_id))
        row = self._row(task_id)
        if row is None:
            row = OutboxMessage(
                next(self.db._outbox_ids), task_id, topic, routing_key, result, 0, at, "PENDING"
            )
        else:
            row = attrs.evolve(
                row,
                topic=topic,
                routing_key=routing_key,
                result=result,
                attempts=0,
                next_attempt_at=at,
                status="PENDING",
                last_error=None,
                claimed_by=None,
                claimed_until=None,
            )
        self.uow.pending_outbox[task_id] = attrs.evolve(row, updated_at=at)
        self.uow.pending_puts.append(task_id)

    async def due(self, now: datetime, limit: int = 100) -> list[OutboxMessage]:
        await self.check("outbox.due")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        rows = [m for m in merged.values() if m.status == "PENDING" and m.next_attempt_at <= now]
        return sorted(rows, key=lambda m: (m.next_attempt_at, m.id))[:limit]

    async def claim(
        self, now: datetime, until: datetime, owner: str, limit: int = 100
    ) -> list[OutboxMessage]:
        await self.check("outbox.claim")
        now, until = utc(now), utc(until)
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        candidates = sorted(merged.values(), key=lambda m: (m.next_attempt_at, m.id))
        claimed: list[OutboxMessage] = []
        for row in candidates:
            if len(claimed) == limit:
                break
            if not _claimable(row, now):
                continue
            if not await self.db.try_lock(("outbox", row.task_id), self.uow._owner):
                continue  # FOR UPDATE SKIP LOCKED
            current = self._row(row.task_id)
            if current is None or not _claimable(current, now):
                continue
            current = attrs.evolve(current, claimed_by=owner, claimed_until=until)
            self.uow.pending_outbox[current.task_id] = current
            claimed.append(current)
        return claimed

    async def list_messages(
        self,
        status: str | None = None,
        task_id: str | None = None,
        *,
        after_id: int = 0,
        limit: int = 100,
    ) -> list[OutboxMessage]:
        await self.check("outbox.list_messages")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        rows = [
            m
            for m in merged.values()
            if m.id > after_id
            and (status is None or m.status == status)
            and (task_id is None or m.task_id == task_id)
        ]
        return sorted(rows, key=lambda m: m.id)[:limit]

    async def count_by_status(self) -> dict[str, int]:
        await self.check("outbox.count_by_status")
        merged = dict(self.db.outbox) | self.uow.pending_outbox
        counts: dict[str, int] = {}
        for row in merged.values():
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    async def redrive(self, task_id: str, at: datetime) -> bool:
        await self.check("outbox.redrive")
        at = utc(at)
        await self.uow.lock(("outbox", task_id))
        row = self._row(task_id)
        if row is None or row.status != "DEAD":
            return False
        self.uow.pending_outbox[task_id] = attrs.evolve(
            row,
            status="PENDING",
            attempts=0,
            next_attempt_at=at,
            updated_at=at,
            claimed_by=None,
            claimed_until=None,
        )
        return True

    async def _cas(self, message_id: int, expected_attempts: int, **changes: object) -> bool:
        row = self._by_id(message_id)
        if row is None:
            return False
        await self.uow.lock(("outbox", row.task_id))
        row = self._row(row.task_id)
        if row is None or row.status != "PENDING" or row.attempts != expected_attempts:
            return False
        changes |= {"claimed_by": None, "claimed_until": None}
        self.uow.pending_outbox[row.task_id] = attrs.evolve(row, **changes)  # type: ignore[arg-type]
        return True

    async def mark_sent(self, message_id: int, attempts: int) -> bool:
        await self.check("outbox.mark_sent")
        return await self._cas(
            message_id, attempts, status="SENT", attempts=attempts + 1, last_error=None
        )

    async def mark_retry(
        self, message_id: int, attempts: int, next_attempt_at: datetime, error: str
    ) -> bool:
        await self.check("outbox.mark_retry")
        return await self._cas(
            message_id,
            attempts,
            attempts=attempts + 1,
            next_attempt_at=utc(next_attempt_at),
            last_error=error,
        )

    async def mark_dead(self, message_id: int, attempts: int, error: str) -> bool:
        await self.check("outbox.mark_dead")
        return await self._cas(
            message_id, attempts, status="DEAD", attempts=attempts + 1, last_error=error
        )

    async def get(self, task_id: str) -> OutboxMessage | None:
        await self.check("outbox.get")
        return self._row(task_id)


class FakeParseBatches(_Repo):
    """Rows locked by id for writes; planning locks ("plan", sha256, tier)."""

    def _merged(self) -> dict[int, ParseBatch]:
        return dict(self.db.parse_batches) | self.uow.pending_batches

    async def lock_document(self, sha256: str, tier: ParseTier) -> None:
        await self.check("parse_batches.lock_document")
        await self.uow.lock(("plan", (sha256, tier)))

    async def list_for(self, sha256: str, tier: ParseTier) -> list[ParseBatch]:
        await self.check("parse_batches.list_for")
        return sorted(
            (b for b in self._merged().values() if b.sha256 == sha256 and b.tier is tier),
            key=lambda b: b.id,
        )

    async def add(self, batch: NewParseBatch) -> ParseBatch:
        await self.check("parse_batches.add")
        row = ParseBatch(
            id=next(self.db._batch_ids),
            sha256=batch.sha256,
            tier=batch.tier,
            page_range=batch.page_range,
            status=BatchStatus.PENDING,
            priority=batch.priority,
            created_at=utc(batch.created_at),
            source=batch.source,
            page_count=batch.page_count,
            requested_backend=batch.requested_backend,
        )
        self.db.source_tags[row.id] = batch.source_tag
        await self.uow.lock(("batch", row.id))
        self.uow.pending_batches[row.id] = row
        return row

    async def get_many(self, ids: Sequence[int]) -> list[ParseBatch]:
        await self.check("parse_batches.get_many")
        merged = self._merged()
        return [merged[i] for i in dict.fromkeys(ids) if i in merged]

    async def _locked(self, batch_id: int) -> ParseBatch | None:
        await self.uow.lock(("batch", batch_id))
        return self._merged().get(batch_id)

    async def raise_priority(self, batch_id: int, priority: int) -> bool:
        await self.check("parse_batches.raise_priority")
        row = await self._locked(batch_id)
        if row is None or not row.is_active or row.priority >= priority:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(row, priority=priority)
        return True

    async def claim_next(
        self,
        owner: str,
        now: datetime,
        lease_until: datetime,
        *,
        ids: Sequence[int] | None = None,
    ) -> ParseBatch | None:
        await self.check("parse_batches.claim_next")
        now, lease_until = utc(now), utc(lease_until)
        wanted = None if ids is None else set(ids)
        candidates = sorted(
            (
                b
                for b in self._merged().values()
                if b.claimable(now) and (wanted is None or b.id in wanted)
            ),
            key=lambda b: (-b.priority, b.id),
        )
        for seen in candidates:
            row = await self._locked(seen.id)  # then re-check, as the UPDATE's WHERE does
            if row is None or row.claims != seen.claims or not row.claimable(now):
                continue
            claimed = row.claim(owner, now, lease_until - now)
            self.uow.pending_batches[row.id] = claimed
            return claimed
        return None

    async def _held(self, batch_id: int, owner: str, claims: int) -> ParseBatch | None:
        row = await self._locked(batch_id)
        if row is None or row.status is not BatchStatus.PARSING:
            return None
        return row if (row.owner, row.claims) == (owner, claims) else None

    async def renew(self, batch_id: int, owner: str, claims: int, lease_until: datetime) -> bool:
        await self.check("parse_batches.renew")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(row, lease_until=utc(lease_until))
        return True

    async def finish(
        self,
        batch_id: int,
        owner: str,
        claims: int,
        done_at: datetime,
        backend: str,
        warnings: Sequence[str] = (),
    ) -> bool:
        await self.check("parse_batches.finish")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = row.finish(utc(done_at), backend[:64], tuple(warnings))
        return True

    async def fail(
        self, batch_id: int, owner: str, claims: int, at: datetime, code: str, message: str
    ) -> bool:
        await self.check("parse_batches.fail")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        try:
            self.uow.pending_batches[batch_id] = row.fail(code[:64], message, utc(at))
        except IllegalBatchMove:
            return False
        return True

    async def release(self, batch_id: int, owner: str, claims: int) -> bool:
        await self.check("parse_batches.release")
        row = await self._held(batch_id, owner, claims)
        if row is None:
            return False
        self.uow.pending_batches[batch_id] = attrs.evolve(
            row, status=BatchStatus.PENDING, owner=None, lease_until=None
        )
        return True

    async def held_by_prefix(self, prefix: str) -> list[ParseBatch]:
        await self.check("parse_batches.held_by_prefix")
        held = [
            b
            for b in self._merged().values()
            if b.status is BatchStatus.PARSING and (b.owner or "").startswith(prefix)
        ]
        return sorted(held, key=lambda b: b.id)

    async def find_by_source_tag(self, tag: str) -> ParseBatch | None:
        await self.check("parse_batches.find_by_source_tag")
        tagged = [b for b in self._merged().values() if self.db.source_tags.get(b.id) == tag]
        return max(tagged, key=lambda b: b.id) if tagged else None

    async def latest_source(self, sha256: str) -> SourceRef | None:
        await self.check("parse_batches.latest_source")
        mine = [b for b in self._merged().values() if b.sha256 == sha256]
        return max(mine, key=lambda b: b.id).source if mine else None

    async def add_holder(self, sha256: str, user_id: str) -> None:
        await self.check("parse_batches.add_holder")
        await self.uow.lock(("holding", (user_id, sha256)))  # the inserted key row
        if (user_id, sha256) not in self.db.parse_holdings:
            self.uow.pending_holdings.add((user_id, sha256))

    async def held_by(self, user_id: str, sha256s: Iterable[str]) -> set[str]:
        await self.check("parse_batches.held_by")
        held = self.db.parse_holdings | self.uow.pending_holdings
        return {sha256 for sha256 in set(sha256s) if (user_id, sha256) in held}


class FakeUnitOfWork:
    def __init__(self, db: FakeDatabase) -> None:
        self.db = db
        self.pending_logs: dict[str, ParsedLog] = {}
        self.pending_runs: dict[str, ParseRun] = {}
        self.pending_chunks: dict[DocumentScope, dict[str, ChunkRecord]] = {}
        self.pending_configs: dict[tuple[ModelKind, str], EmbeddingConfig | ChatConfig | None] = {}
        self.pending_outbox: dict[str, OutboxMessage] = {}
        self.pending_puts: list[str] = []
        self.pending_tombstones: dict[str, datetime] = {}
        self.pending_batches: dict[int, ParseBatch] = {}
        self.pending_holdings: set[tuple[str, str]] = set()
        self.pending_heartbeats: dict[str, datetime] = {}
        self.parsed_logs = FakeParsedLogs(self)
        self.runs = FakeRuns(self)
        self.chunks = FakeChunks(self)
        self.model_configs = FakeModelConfigs(self)
        self.outbox = FakeOutbox(self)
        self.parse_batches = FakeParseBatches(self)
        self._active = False
        self._owner = object()

    def require_active(self) -> None:
        if not self._active:
            raise PersistenceError("unit of work used outside `async with`")

    async def lock(self, key: tuple[str, object]) -> None:
        await self.db.lock(key, self._owner)

    async def __aenter__(self) -> Self:
        if not self.db.answering:
            raise DatabaseUnavailable("open unit of work failed: the fake database is away")
        self._active = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.rollback()
        self._active = False

    async def commit(self) -> None:
        self.require_active()
        try:
            self.db.faults.check("uow.commit")
        except BaseException:
            await self.rollback()
            raise
        db = self.db
        db.parsed_logs.update(self.pending_logs)
        db.runs.update(self.pending_runs)
        db.chunks.update(self.pending_chunks)
        for (kind, user_id), config in self.pending_configs.items():
            committed: dict[str, Any] = (
                db.configs if kind is ModelKind.EMBEDDING else db.chat_configs
            )
            if config is None:
                committed.pop(user_id, None)
            else:
                committed[user_id] = config
        db.outbox.update(self.pending_outbox)
        db.outbox_puts.update(self.pending_puts)
        db.document_deleted_at.update(self.pending_tombstones)
        db.parse_batches.update(self.pending_batches)
        db.parse_holdings.update(self.pending_holdings)
        db.heartbeats.update(self.pending_heartbeats)
        if any(
            (
                self.pending_logs,
                self.pending_runs,
                self.pending_chunks,
                self.pending_outbox,
                self.pending_batches,
                self.pending_holdings,
            )
        ):
            db.commits += 1
        self._clear()
        await db.release(self._owner)

    async def rollback(self) -> None:
        self._clear()
        await self.db.release(self._owner)

    def _clear(self) -> None:
        self.pending_logs, self.pending_runs, self.pending_chunks = {}, {}, {}
        self.pending_configs, self.pending_outbox, self.pending_tombstones = {}, {}, {}
        self.pending_batches = {}
        self.pending_holdings = set()
        self.pending_heartbeats = {}
        self.pending_puts = []
