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
- `commit` collects the events of the runs added or saved in the unit (as the port says);
  a rollback leaves them on the runs.
- Faults: `db.faults.arm("uow.commit", error)` and friends ("uow.<repository>.<method>").
- The repositories are in `tests/fakes/repositories/`, one module per repository port.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from datetime import datetime
from types import TracebackType
from typing import Any, Self

from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.repositories.errors import DatabaseUnavailable, PersistenceError
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.ports.repositories.outbox import OutboxMessage
from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.repositories.uploads import UploadRecord
from ragline.domain.parse_batch import ParseBatch
from ragline.domain.parse_run import ParseRun, RunEvent
from ragline.domain.reembedding import CopyBatch, Generations, Reembedding
from tests.fakes.faults import Faults
from tests.fakes.repositories.chunks import FakeChunks
from tests.fakes.repositories.documents import FakeDocuments
from tests.fakes.repositories.model_configs import FakeModelConfigs
from tests.fakes.repositories.outbox import FakeOutbox
from tests.fakes.repositories.parse_batches import FakeParseBatches
from tests.fakes.repositories.parsed_logs import FakeParsedLogs
from tests.fakes.repositories.reembeddings import FakeReembeddings
from tests.fakes.repositories.runs import FakeRuns
from tests.fakes.repositories.uploads import FakeUploads

LOCK_TIMEOUT_SECONDS = 5.0


class FakeDatabase:
    """The committed state, shared by every unit of work."""

    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.answering = True  # False: every unit of work meets DatabaseUnavailable
        self.parsed_logs: dict[str, ParsedLog] = {}
        self.runs: dict[str, ParseRun] = {}
        self.run_order: dict[str, int] = {}  # task_id -> insertion order (the SQL id)
        self.document_deleted_at: dict[str, datetime] = {}  # task_id -> the tombstone
        self.labels: dict[DocumentScope, StoredMetadata] = {}  # document metadata
        self.heartbeats: dict[str, datetime] = {}  # task_id -> heartbeat_at
        self.chunks: dict[DocumentScope, dict[str, ChunkRecord]] = {}
        self.configs: dict[str, EmbeddingConfig] = {}
        self.chat_configs: dict[str, ChatConfig] = {}
        self.outbox: dict[str, OutboxMessage] = {}
        self.parse_batches: dict[int, ParseBatch] = {}
        self._batch_ids = itertools.count(1)
        self.source_tags: dict[int, str | None] = {}  # batch id -> source_tag (a column)
        self.parse_holdings: set[tuple[str, str]] = set()  # (user_id, sha256)
        self.generations: dict[str, Generations] = {}
        self.reembeddings: dict[str, Reembedding] = {}
        self.copy_batches: dict[tuple[str, int], CopyBatch] = {}  # (reembedding_id, seq)
        self.uploads: dict[tuple[str, str], UploadRecord] = {}  # (user_id, key)
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
        self.pending_labels: dict[DocumentScope, StoredMetadata] = {}
        self.pending_batches: dict[int, ParseBatch] = {}
        self.pending_holdings: set[tuple[str, str]] = set()
        self.pending_uploads: dict[tuple[str, str], UploadRecord] = {}
        self.pending_heartbeats: dict[str, datetime] = {}
        self.pending_generations: dict[str, Generations] = {}
        self.pending_reembeddings: dict[str, Reembedding] = {}
        self.pending_copy_batches: dict[tuple[str, int], CopyBatch] = {}
        self.seen_runs: list[ParseRun] = []  # the caller's runs added or saved (their events)
        self.events: list[RunEvent] = []  # collected on commit
        self.parsed_logs = FakeParsedLogs(self)
        self.runs = FakeRuns(self)
        self.documents = FakeDocuments(self)
        self.chunks = FakeChunks(self)
        self.model_configs = FakeModelConfigs(self)
        self.outbox = FakeOutbox(self)
        self.parse_batches = FakeParseBatches(self)
        self.reembeddings = FakeReembeddings(self)
        self.uploads = FakeUploads(self)
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
        db.labels.update(self.pending_labels)
        db.parse_batches.update(self.pending_batches)
        db.parse_holdings.update(self.pending_holdings)
        db.heartbeats.update(self.pending_heartbeats)
        db.generations.update(self.pending_generations)
        db.reembeddings.update(self.pending_reembeddings)
        db.copy_batches.update(self.pending_copy_batches)
        db.uploads.update(self.pending_uploads)
        if any(
            (
                self.pending_logs,
                self.pending_runs,
                self.pending_chunks,
                self.pending_outbox,
                self.pending_batches,
                self.pending_holdings,
                self.pending_generations,
                self.pending_reembeddings,
                self.pending_copy_batches,
            )
        ):
            db.commits += 1
        for run in self.seen_runs:
            self.events.extend(run.pull_events())
        self._clear()
        await db.release(self._owner)

    async def rollback(self) -> None:
        self._clear()
        await self.db.release(self._owner)

    def collect_new_events(self) -> list[RunEvent]:
        events, self.events = self.events, []
        return events

    def saw(self, run: ParseRun) -> None:
        if all(seen is not run for seen in self.seen_runs):
            self.seen_runs.append(run)

    def _clear(self) -> None:
        self.seen_runs = []
        self.pending_logs, self.pending_runs, self.pending_chunks = {}, {}, {}
        self.pending_configs, self.pending_outbox, self.pending_tombstones = {}, {}, {}
        self.pending_batches = {}
        self.pending_labels = {}
        self.pending_holdings = set()
        self.pending_heartbeats = {}
        self.pending_generations, self.pending_reembeddings = {}, {}
        self.pending_copy_batches = {}
        self.pending_uploads = {}
        self.pending_puts = []
