"""Contract kit for the UnitOfWork port (parsed logs, runs, chunks, model configs, outbox).

One class per capability (as Haystack's `haystack/testing/document_store.py` does): the base
contract every UnitOfWork must pass, and mixins for what only some stores can do. A real
adapter combines them all; a test double leaves out a mixin it honestly lacks, and says so.

- `UnitOfWorkContract`: runs, parsed logs, chunks, model configs, outbox, transactions and
  the retry race. Fixture: `uow_factory`.
- `EncryptedApiKeysContract`: API keys are stored encrypted and a wrong secret fails
  clearly. Fixtures: `other_key_uow_factory`, `stored_api_key`.

Subclass in a module pytest collects and provide the fixtures:

    class TestMyStore(UnitOfWorkContract, EncryptedApiKeysContract):
        @pytest.fixture
        async def uow_factory(self) -> AsyncIterator[UnitOfWorkFactory]:
            ...  # units of work on a migrated database, API-key secret "A"

        @pytest.fixture
        async def other_key_uow_factory(self, uow_factory) -> AsyncIterator[UnitOfWorkFactory]:
            ...  # the SAME database, API-key secret "B"

        @pytest.fixture
        def stored_api_key(self, uow_factory) -> StoredApiKey:
            ...  # async user_id -> the raw stored api-key column (to prove it is encrypted)

The database may be shared by every test of a session: each test works under fresh ids.
Set `serializes_transactions = True` when the store admits one unit of work at a time
(SQLite with BEGIN IMMEDIATE): the race test then cannot make both contenders read before
either writes, and checks the same outcome without forcing that interleaving. Such a store
also overrides `until_queued(factory)` (return once a second unit waits for the open one).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import ClassVar

import attrs
import pytest

from ragline.application.ports.parser import PdfParserBackend
from ragline.application.ports.unit_of_work import (
    ChatConfig,
    ChunkCounts,
    ChunkRecord,
    ConcurrentUpdate,
    DatabaseUnavailable,
    DocumentScope,
    DuplicateTaskId,
    EmbeddingConfig,
    ModelKind,
    OutboxMessage,
    PersistenceError,
    RunQuery,
    UnitOfWorkFactory,
)
from ragline.application.tasks import (
    ParseTaskCommand,
    RejectedBody,
    TaskIssuer,
    TaskResult,
    TaskStatus,
    TriggerMode,
)
from ragline.domain.parse_run import (
    BEGIN_INDEXING,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
    FailureCode,
    FailurePoint,
    FailureReason,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
    RetryRefusal,
    Stage,
    StageStatus,
    TaskIdentity,
    retry_refusal,
)

StoredApiKey = Callable[[str], Awaitable[str | None]]

T0 = datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)
CJK_DETAIL = "解析引擎失败：第３页表格无法识别（𠀀 扩展字符）"
MD = MarkdownLocation("md-bucket", "users/u1/数据集/文档.md")


def uid(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


NO_TASK = RejectedBody(reason="invalid_json: test")
"""The stored task of a log whose task does not matter to the test."""


def a_result(
    task_id: str, status: TaskStatus = TaskStatus.SUCCESS, user_message: str | None = None
) -> TaskResult:
    """A result with ids beyond 2**53 and a time with microseconds, so a store that rounds
    either fails the round trip."""
    failed = status is TaskStatus.FAILED
    return TaskResult(
        task_id=task_id,
        original_file_id=9_007_199_254_740_993,
        document_parsed_log_id=12,
        dataset_id=4,
        user_id=1001,
        task_status=status,
        parse_finished_at=datetime(2026, 5, 16, 8, 30, 12, 345_678, tzinfo=UTC),
        failure_reason="VECTORIZING_FAILED:页 3" if failed else None,
        user_message=user_message,
    )


def stored_command(task_id: str) -> ParseTaskCommand:
    """A task with every field away from its default, so a store that drops or retypes one
    fails the round trip."""
    return ParseTaskCommand(
        task_id=task_id,
        original_file_id=9_007_199_254_740_993,
        document_parse_task_id=2,
        user_id=1001,
        dataset_id=4,
        file_type="pdf",
        source_bucket="sources",
        source_object_key="1001/年度报告.pdf",
        source_filename="年度报告.pdf",
        md_bucket="markdown",
        md_object_key="1001/年度报告.md",
        trigger_mode=TriggerMode.MANUAL_RETRY,
        pdf_parser_backend=PdfParserBackend.NAIVE,
        docling_force_ocr=True,
        image_bucket="markdown",
        image_prefix="1001/images/",
        is_retry=True,
        previous_task_id="earlier",
        issued_by=TaskIssuer.RAGLINE,
    )


def identity(task_id: str | None = None, user_id: str = "u1") -> TaskIdentity:
    return TaskIdentity(
        task_id=task_id or uid(),
        original_file_id="1001",
        document_parse_task_id="2002",
        user_id=user_id,
        dataset_id="d1",
        file_type="pdf",
    )


def run_until_failed_at(stage: Stage, task_id: str | None = None) -> ParseRun:
    """A run whose stages before `stage` succeeded and `stage` failed (CJK detail)."""
    run = ParseRun.open(identity(task_id), at(0))
    for index, current in enumerate(Stage):
        run.start_stage(current, at(index + 1))
        if current is stage:
            run.fail_stage(current, FailureCode.VECTORIZING_FAILED, CJK_DETAIL, at(index + 1.5))
            return run
        markdown = MD if current is Stage.CLEANING else None
        run.succeed_stage(current, at(index + 1.25), duration_ms=250 + index, markdown=markdown)
    raise AssertionError("unreachable")


def _pending() -> ParseRun:
    return ParseRun.open(identity(), at(0))


def _processing() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.start_stage(Stage.CLEANING, at(1))
    run.succeed_stage(Stage.CLEANING, at(2), duration_ms=1000, markdown=MD)
    run.start_stage(Stage.CHUNKING, at(3))
    return run


def _succeeded() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    for index, stage in enumerate(Stage):
        run.start_stage(stage, at(index + 1))
        markdown = MD if stage is Stage.CLEANING else None
        run.succeed_stage(stage, at(index + 1.5), duration_ms=500, markdown=markdown)
    return run


def _failed_mid_run() -> ParseRun:
    return run_until_failed_at(Stage.VECTORIZING)


def _rejected() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.reject(FailureCode.INVALID_TASK_CONTEXT, "file_type 与文件记录不一致", at(1))
    return run


def _long_reason() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.start_stage(Stage.CLEANING, at(1))
    run.fail_stage(Stage.CLEANING, FailureCode.PARSE_ENGINE_FAILED, "错误" * 600, at(2), 1000)
    assert run.failure_reason is not None and run.failure_reason.truncated
    return run


def _interrupted() -> ParseRun:
    run = _processing()
    run.converge_interrupted(at(9), "重投时发现未完成")
    return run


def _inherited_retry() -> ParseRun:
    previous = run_until_failed_at(Stage.PRETOKENIZE)
    new_id = uid("retry")
    previous.supersede(new_id)
    run = previous.derive_retry(new_id, at(20))
    run.skip_inherited_stage(Stage.CLEANING, at(21))
    return run


def _retry_loser() -> ParseRun:
    return ParseRun.retry_loser(identity(), uid("old"), RetryRefusal.CONCURRENT_SUPERSEDE, at(5))


def _superseded() -> ParseRun:
    run = run_until_failed_at(Stage.CHUNKING)
    run.supersede(uid("retry"))
    return run


def _other_time_zone() -> ParseRun:
    run = ParseRun.open(identity(), T0.astimezone(timezone(timedelta(hours=8))))
    run.start_stage(Stage.CLEANING, at(1).astimezone(timezone(timedelta(hours=-5))))
    return run


RUN_STATES: dict[str, Callable[[], ParseRun]] = {
    "pending": _pending,
    "processing": _processing,
    "succeeded": _succeeded,
    "failed-mid-run-cjk": _failed_mid_run,
    "rejected-task-validation": _rejected,
    "failed-long-reason-truncated": _long_reason,
    "interrupted": _interrupted,
    "retry-with-inherited-stages": _inherited_retry,
    "retry-loser": _retry_loser,
    "superseded": _superseded,
    "non-utc-times": _other_time_zone,
}


def scope(user_id: str = "u1", dataset_id: str = "d1", doc_id: str | None = None) -> DocumentScope:
    return DocumentScope(user_id, dataset_id, doc_id or uid("doc"))


def chunk_set(
    where: DocumentScope, task_id: str, parents: int = 2, per_parent: int = 3
) -> list[ChunkRecord]:
    """Parents (no index statuses) followed by their children (PENDING), in order."""
    records: list[ChunkRecord] = []
    order = 0
    for p in range(parents):
        parent_id = f"{where.doc_id}-p{p}"
        records.append(
            ChunkRecord(
                chunk_id=parent_id,
                scope=where,
                task_id=task_id,
                parent_id=None,
                order_index=order,
                text=f"第{p}章 父块正文 " * 20,
                section_path=("文档", f"第{p}章"),
                canonical_path=f"/文档/第{p}章",
                structure_node_id=f"node-{p}",
                node_type="section",
                source_type="markdown",
                span_start=p * 1000,
                span_end=p * 1000 + 999,
            )
        )
        order += 1
        for c in range(per_parent):
            records.append(
                ChunkRecord(
                    chunk_id=f"{where.doc_id}-p{p}-c{c}",
                    scope=where,
                    task_id=task_id,
                    parent_id=parent_id,
                    order_index=order,
                    text=f"子块 {p}.{c}：向量检索与关键词检索 mixed text",
                    section_path=("文档", f"第{p}章", f"{p}.{c}"),
                    canonical_path=f"/文档/第{p}章/{p}.{c}",
                    structure_node_id=None,
                    node_type=None,
                    source_type="markdown",
                    span_start=p * 1000 + c * 100,
                    span_end=p * 1000 + c * 100 + 99,
                    dense_status=ChunkIndexStatus.PENDING,
                    sparse_status=ChunkIndexStatus.PENDING,
                )
            )
            order += 1
    return records


def children(records: list[ChunkRecord]) -> list[ChunkRecord]:
    return [r for r in records if not r.is_parent]


class UnitOfWorkContract:
    """The behaviour every UnitOfWork must show (real adapters and test doubles alike)."""

    serializes_transactions: ClassVar[bool] = False
    race_rounds: ClassVar[int] = 6

    @pytest.fixture
    def uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass and return a factory on a migrated database")

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    async def add_run(factory: UnitOfWorkFactory, run: ParseRun) -> None:
        async with factory() as uow:
            await uow.runs.add(run)
            await uow.commit()

    @staticmethod
    async def get_run(factory: UnitOfWorkFactory, task_id: str) -> ParseRun | None:
        async with factory() as uow:
            return await uow.runs.get(task_id)

    async def until_queued(self, factory: UnitOfWorkFactory) -> None:
        """Return once another unit of work is waiting for the one open now (a store with
        `serializes_transactions` overrides this by watching its own queue; no sleep)."""
        raise NotImplementedError("a store that serializes transactions shows its queue")

    # -- parse runs ---------------------------------------------------------------------

    @pytest.mark.parametrize("state", sorted(RUN_STATES))
    async def test_run_round_trips_in_every_state(
        self, uow_factory: UnitOfWorkFactory, state: str
    ) -> None:
        run = RUN_STATES[state]()
        await self.add_run(uow_factory, run)
        stored = await self.get_run(uow_factory, run.task_id)
        assert stored == run
        assert stored is not None
        assert stored.pending_events == ()
        assert list(stored.stages) == list(Stage)
        for when in (stored.created_at, stored.started_at, stored.finished_at):
            assert when is None or when.utcoffset() == timedelta(0)

    async def test_failure_reason_text_survives_exactly(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _long_reason()
        await self.add_run(uow_factory, run)
        stored = await self.get_run(uow_factory, run.task_id)
        assert stored is not None and stored.failure_reason is not None
        assert run.failure_reason is not None
        assert stored.failure_reason.text == run.failure_reason.text
        assert len(stored.failure_reason.text) == 512
        assert stored.failure_reason == FailureReason.parse(run.failure_reason.text)

    async def test_unknown_run_is_none(self, uow_factory: UnitOfWorkFactory) -> None:
        assert await self.get_run(uow_factory, uid("missing")) is None

    async def test_duplicate_task_id_is_refused_and_the_transaction_goes_on(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        first = _pending()
        await self.add_run(uow_factory, first)
        other = _pending()
        async with uow_factory() as uow:
            with pytest.raises(DuplicateTaskId) as raised:
                await uow.runs.add(ParseRun.open(first.identity, at(99)))
            assert raised.value.task_id == first.task_id
            await uow.runs.add(other)  # the same transaction is still usable
            await uow.commit()
        assert await self.get_run(uow_factory, first.task_id) == first
        assert await self.get_run(uow_factory, other.task_id) == other

    async def test_save_writes_the_new_state_and_a_stale_save_is_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _pending()
        await self.add_run(uow_factory, run)
        stale = await self.get_run(uow_factory, run.task_id)
        assert stale is not None

        async with uow_factory() as uow:
            current = await uow.runs.get(run.task_id)
            assert current is not None
            loaded = current.version
            current.start_stage(Stage.CLEANING, at(1))
            current.succeed_stage(Stage.CLEANING, at(2), duration_ms=1000, markdown=MD)
            await uow.runs.save(current, loaded)
            await uow.commit()
        assert await self.get_run(uow_factory, run.task_id) == current

        stale.reject(FailureCode.INVALID_TASK_CONTEXT, "late", at(3))
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(stale, 0)
        assert await self.get_run(uow_factory, run.task_id) == current

    async def test_save_of_a_missing_run_is_a_concurrent_update(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _pending()
        run.start_stage(Stage.CLEANING, at(1))
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(run, 0)

    async def test_save_must_carry_a_newer_version(self, uow_factory: UnitOfWorkFactory) -> None:
        run = _pending()
        await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            with pytest.raises(ValueError):
                await uow.runs.save(run, run.version)  # unchanged: the row would not change
            run.start_stage(Stage.CLEANING, at(1))
            await uow.runs.save(run, run.version - 1)
            await uow.commit()
        assert await self.get_run(uow_factory, run.task_id) == run

    async def test_naive_datetimes_are_refused(self, uow_factory: UnitOfWorkFactory) -> None:
        run = ParseRun.open(identity(), datetime(2026, 1, 1))
        async with uow_factory() as uow:
            with pytest.raises(PersistenceError):
                await uow.runs.add(run)
        assert await self.get_run(uow_factory, run.task_id) is None

    async def test_repositories_outside_the_block_fail(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        uow = uow_factory()
        with pytest.raises(PersistenceError):
            await uow.runs.get(uid("never"))

    async def test_chunks_outside_the_scope_are_refused(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        mine, other = scope(), scope()
        async with uow_factory() as uow:
            with pytest.raises(ValueError):
                await uow.chunks.replace_document(mine, chunk_set(other, uid("task")))

    async def test_mark_superseded_only_once_only_failed_and_bumps_version(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        failed = run_until_failed_at(Stage.CHUNKING)
        processing = _processing()
        for run in (failed, processing):
            await self.add_run(uow_factory, run)
        first, second = uid("retry"), uid("retry")
        async with uow_factory() as uow:
            assert await uow.runs.mark_superseded(processing.task_id, first) is False
            assert await uow.runs.mark_superseded(uid("missing"), first) is False
            assert await uow.runs.mark_superseded(failed.task_id, first) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.mark_superseded(failed.task_id, second) is False
        stored = await self.get_run(uow_factory, failed.task_id)
        assert stored is not None
        assert stored.superseded_by_task_id == first
        assert stored.version == failed.version + 1
        # A stale aggregate (loaded before the mark) can no longer overwrite the row.
        failed.supersede(second)
        async with uow_factory() as uow:
            with pytest.raises(ConcurrentUpdate):
                await uow.runs.save(failed, failed.version - 1)

    async def test_list_unfinished_and_recent(self, uow_factory: UnitOfWorkFactory) -> None:
        future = datetime(2300, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        runs = []
        for offset, build in enumerate((_pending, _processing, _succeeded, _failed_mid_run)):
            run = build()
            run.created_at = future + timedelta(seconds=offset)
            runs.append(run)
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            recent = await uow.runs.list_recent(limit=4)
            unfinished = await uow.runs.list_unfinished(limit=100_000)
        assert [r.task_id for r in recent] == [r.task_id for r in reversed(runs)]
        assert recent[0] == runs[-1]
        unfinished_ids = [r.task_id for r in unfinished]
        assert runs[0].task_id in unfinished_ids and runs[1].task_id in unfinished_ids
        assert runs[2].task_id not in unfinished_ids and runs[3].task_id not in unfinished_ids
        assert all(not r.is_terminal for r in unfinished)

    async def test_heartbeats_and_stale_runs(self, uow_factory: UnitOfWorkFactory) -> None:
        """Heartbeats live outside the aggregate (no version bump); a run is stale when its
        heartbeat, or its created_at before the first, is older than the cut-off; the
        sweep's claim is a compare-and-set on that."""
        base = datetime(1975, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        working, waiting, done = _processing(), _pending(), _succeeded()
        for offset, run in enumerate((working, waiting, done)):
            run.created_at = base + timedelta(seconds=offset)
            await self.add_run(uow_factory, run)
        cutoff = base + timedelta(seconds=10)
        async with uow_factory() as uow:
            stale = await uow.runs.list_stale(cutoff, limit=100_000)
        assert working.task_id in stale and waiting.task_id in stale
        assert stale.index(working.task_id) < stale.index(waiting.task_id)
        assert done.task_id not in stale
        async with uow_factory() as uow:
            assert await uow.runs.heartbeat(working.task_id, cutoff + timedelta(seconds=10))
            assert await uow.runs.heartbeat(done.task_id, cutoff) is False  # terminal
            assert await uow.runs.heartbeat(uid("missing"), cutoff) is False
            await uow.commit()
        async with uow_factory() as uow:
            stale = await uow.runs.list_stale(cutoff, limit=100_000)
            assert working.task_id not in stale and waiting.task_id in stale
            assert await uow.runs.claim_stale(working.task_id, cutoff, cutoff) is False
            claimed_at = cutoff + timedelta(seconds=20)
            assert await uow.runs.claim_stale(waiting.task_id, cutoff, claimed_at) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.claim_stale(waiting.task_id, cutoff, claimed_at) is False
            assert waiting.task_id not in await uow.runs.list_stale(cutoff, limit=100_000)
            stored = await uow.runs.get(working.task_id)
            assert stored == working  # the heartbeat is not part of the aggregate
            assert stored is not None
            expected = stored.version
            stored.converge_interrupted(cutoff, "no heartbeat")
            await uow.runs.save(stored, expected)  # the heartbeat bumped no version
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.heartbeat(working.task_id, cutoff) is False  # now FAILED
            assert working.task_id not in await uow.runs.list_stale(
                cutoff + timedelta(days=1), limit=100_000
            )

    @staticmethod
    def _run_of(
        build: Callable[[], ParseRun], user: str, dataset: str, doc: str, seconds: float
    ) -> ParseRun:
        run = build()
        run.identity = attrs.evolve(
            run.identity, user_id=user, dataset_id=dataset, original_file_id=doc
        )
        run.created_at = at(seconds)
        return run

    async def test_list_page_filters_pages_and_counts(self, uow_factory: UnitOfWorkFactory) -> None:
        user, other = uid("u"), uid("u")
        mine = [
            self._run_of(_succeeded, user, "d1", "doc-a", 10),
            self._run_of(_failed_mid_run, user, "d1", "doc-b", 20),
            self._run_of(_succeeded, user, "d2", "doc-c", 30),
            self._run_of(_pending, user, "d1", "doc-d", 40),
        ]
        for run in [*mine, self._run_of(_succeeded, other, "d1", "doc-a", 50)]:
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            every = await uow.runs.list_page(RunQuery(user_id=user))
            first = await uow.runs.list_page(RunQuery(user_id=user), offset=0, limit=3)
            second = await uow.runs.list_page(RunQuery(user_id=user), offset=3, limit=3)
            d1 = await uow.runs.list_page(RunQuery(user_id=user, dataset_id="d1"))
            done = await uow.runs.list_page(RunQuery(user_id=user, status=PipelineStatus.SUCCESS))
            nobody = await uow.runs.list_page(RunQuery(user_id=uid("u")))
            doc_a = await uow.runs.list_page(RunQuery(user_id=user, doc_id="doc-a"))
        assert [r.task_id for r in every.runs] == [r.task_id for r in reversed(mine)]
        assert every.total == first.total == second.total == 4
        assert [r.task_id for r in first.runs + second.runs] == [r.task_id for r in every.runs]
        assert len(first.runs) == 3 and len(second.runs) == 1
        assert every.runs[0] == mine[-1]
        assert {r.task_id for r in d1.runs} == {mine[0].task_id, mine[1].task_id, mine[3].task_id}
        assert d1.total == 3
        assert {r.task_id for r in done.runs} == {mine[0].task_id, mine[2].task_id}
        assert nobody.runs == [] and nobody.total == 0
        assert [r.task_id for r in doc_a.runs] == [mine[0].task_id] and doc_a.total == 1

    async def test_latest_run_per_document(self, uow_factory: UnitOfWorkFactory) -> None:
        user = uid("u")
        failed = self._run_of(_failed_mid_run, user, "d1", "doc-b", 10)
        retried = self._run_of(_succeeded, user, "d1", "doc-b", 5)  # inserted later, older clock
        only = self._run_of(_succeeded, user, "d1", "doc-a", 20)
        elsewhere = self._run_of(_succeeded, user, "d2", "doc-z", 30)
        stranger = self._run_of(_succeeded, uid("u"), "d1", "doc-c", 40)
        for run in (failed, retried, only, elsewhere, stranger):
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            page = await uow.runs.latest_per_document(user, "d1")
            first = await uow.runs.latest_per_document(user, "d1", offset=0, limit=1)
            rest = await uow.runs.latest_per_document(user, "d1", offset=1, limit=5)
            latest_b = await uow.runs.latest_for_document(user, "d1", "doc-b")
            missing = await uow.runs.latest_for_document(user, "d2", "doc-b")
            empty = await uow.runs.latest_per_document(uid("u"), "d1")
        assert [(doc, run.task_id) for doc, run in page.latest] == [
            ("doc-a", only.task_id),
            ("doc-b", retried.task_id),
        ]
        assert page.total == first.total == rest.total == 2
        assert first.latest + rest.latest == page.latest
        assert latest_b == retried
        assert missing is None
        assert empty.latest == [] and empty.total == 0

    async def test_the_run_that_owns_a_document_s_index(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """The newest run that got to CHUNKING (or inherited it), whatever came after."""
        user = uid("u")
        indexed = self._run_of(_succeeded, user, "d1", "doc-b", 10)
        refused = self._run_of(_retry_loser, user, "d1", "doc-b", 20)
        bad_upload = self._run_of(
            lambda: run_until_failed_at(Stage.CLEANING), user, "d1", "doc-b", 30
        )
        old = self._run_of(_succeeded, user, "d1", "doc-c", 10)
        broke_it = self._run_of(_failed_mid_run, user, "d1", "doc-c", 20)
        resumed = self._run_of(_inherited_retry, user, "d1", "doc-e", 10)
        never = self._run_of(_rejected, user, "d1", "doc-d", 10)
        stranger = self._run_of(_succeeded, uid("u"), "d1", "doc-b", 40)
        gone = self._run_of(_succeeded, user, "d1", "doc-f", 10)
        runs = (indexed, refused, bad_upload, old, broke_it, resumed, never, stranger, gone)
        for run in runs:
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            await uow.runs.mark_document_deleted(user, "d1", "doc-f", at(50))
            await uow.commit()
        async with uow_factory() as uow:
            docs = ["doc-b", "doc-c", "doc-d", "doc-e", "doc-f", "doc-x"]
            owners = await uow.runs.index_owners(user, "d1", docs)
            elsewhere = await uow.runs.index_owners(user, "d2", docs)
            none_asked = await uow.runs.index_owners(user, "d1", [])
        assert {doc: run.task_id for doc, run in owners.items()} == {
            "doc-b": indexed.task_id,  # a refused retry and a failed upload did not touch it
            "doc-c": broke_it.task_id,  # a later run replaced the chunk set, then failed
            "doc-e": resumed.task_id,  # inherited CHUNKING: the lineage's newest run
        }
        assert owners["doc-b"] == indexed
        assert elsewhere == {} and none_asked == {}

    async def test_a_deleted_document_is_no_longer_listed_until_a_new_run(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("u")
        first = self._run_of(_succeeded, user, "d1", "doc-b", 10)
        second = self._run_of(_failed_mid_run, user, "d1", "doc-b", 20)
        kept = self._run_of(_succeeded, user, "d1", "doc-a", 30)
        for run in (first, second, kept):
            await self.add_run(uow_factory, run)
        async with uow_factory() as uow:
            assert await uow.runs.mark_document_deleted(user, "d1", "doc-b", at(40)) == 2
            assert await uow.runs.mark_document_deleted(uid("u"), "d1", "doc-b", at(40)) == 0
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.mark_document_deleted(user, "d1", "doc-b", at(41)) == 0
            page = await uow.runs.latest_per_document(user, "d1")
            assert [doc for doc, _ in page.latest] == ["doc-a"] and page.total == 1
            assert await uow.runs.latest_for_document(user, "d1", "doc-b") is None
            # the runs stay (history, idempotency) and their aggregate is untouched
            assert await uow.runs.get(second.task_id) == second
            listed = await uow.runs.list_page(RunQuery(user_id=user))
            assert listed.total == 3
        # a save of a marked run keeps the mark
        async with uow_factory() as uow:
            stored = await uow.runs.get(second.task_id)
            assert stored is not None
            stored.supersede(uid("retry"))
            await uow.runs.save(stored, second.version)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.latest_for_document(user, "d1", "doc-b") is None
        third = self._run_of(_pending, user, "d1", "doc-b", 50)  # uploaded again
        await self.add_run(uow_factory, third)
        async with uow_factory() as uow:
            assert await uow.runs.latest_for_document(user, "d1", "doc-b") == third
            page = await uow.runs.latest_per_document(user, "d1")
            assert [doc for doc, _ in page.latest] == ["doc-a", "doc-b"]

    async def test_objects_in_use_are_those_other_live_documents_name(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """What a document delete may not remove: an object another live document's run
        (any tenant's) names as its source or Markdown, or that the document's own
        converting run names as its source; not its own Markdown, not a re-index run's
        source, not what only a deleted document names."""
        user, stranger = uid("u"), uid("u")

        def place(name: str) -> MarkdownLocation:
            return MarkdownLocation(uid("bucket"), f"{name}/{uid('key')}/文档")

        written, shared, theirs, own_source = place("md"), place("md"), place("s"), place("s")
        foreign, gone_md, gone_source, no_log, loose = (place(n) for n in "fgGnl")

        async def add(
            owner: str,
            doc: str,
            markdown: MarkdownLocation | None,
            source: MarkdownLocation | None,
            file_type: str = "pdf",
            log: bool = True,
        ) -> None:
            run = self._run_of(_succeeded, owner, "d1", doc, 10)
            run.identity = attrs.evolve(run.identity, file_type=file_type)
            run.markdown = markdown
            async with uow_factory() as uow:
                await uow.runs.add(run)
                if log:
                    await uow.parsed_logs.add(run.task_id, NO_TASK, at(0), source=source)
                await uow.commit()

        await add(user, "doomed", written, own_source)  # converted: wrote `written`
        await add(user, "doomed", written, written, file_type="MD")  # its re-index
        await add(user, "kept", shared, theirs)  # another live document of the user
        await add(user, "doomed-too", shared, None, log=False)
        await add(stranger, "doomed", foreign, foreign, file_type="md")  # same doc id, not mine
        await add(user, "gone", gone_md, gone_source)
        await add(user, "other", no_log, None, log=False)
        async with uow_factory() as uow:
            assert await uow.runs.mark_document_deleted(user, "d1", "gone", at(20)) == 1
            await uow.commit()
        asked = [written, shared, theirs, own_source, foreign, gone_md, gone_source, no_log, loose]
        besides = scope(user, "d1", "doomed")
        async with uow_factory() as uow:
            in_use = await uow.runs.objects_in_use(asked, besides)
            assert await uow.runs.objects_in_use([], besides) == set()
        assert in_use == {shared, theirs, own_source, foreign, no_log}
        async with uow_factory() as uow:  # once `kept` is deleted too, its names are free
            await uow.runs.mark_document_deleted(user, "d1", "kept", at(21))
            await uow.runs.mark_document_deleted(user, "d1", "doomed-too", at(21))
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.runs.objects_in_use([shared, theirs], besides) == set()

    async def test_a_parsed_log_keeps_the_source_it_names(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task_id, bare = uid("log"), uid("log")
        source = MarkdownLocation("源-bucket", "用户/1001/报告.pdf")
        async with uow_factory() as uow:
            added = await uow.parsed_logs.add(task_id, NO_TASK, at(0), source=source)
            await uow.parsed_logs.add(bare, NO_TASK, at(0))
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.parsed_logs.get(task_id)
            without = await uow.parsed_logs.get(bare)
        assert added.source == source and stored is not None and stored.source == source
        assert without is not None and without.source is None

    # -- the unit of work ---------------------------------------------------------------

    async def test_leaving_without_commit_rolls_back(self, uow_factory: UnitOfWorkFactory) -> None:
        run = _pending()
        log_id = uid("log")
        async with uow_factory() as uow:
            await uow.runs.add(run)
            await uow.parsed_logs.add(log_id, NO_TASK, at(0))
        assert await self.get_run(uow_factory, run.task_id) is None
        async with uow_factory() as uow:
            assert await uow.parsed_logs.get(log_id) is None

    async def test_an_exception_rolls_back_and_propagates(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _pending()
        with pytest.raises(RuntimeError, match="boom"):
            async with uow_factory() as uow:
                await uow.runs.add(run)
                raise RuntimeError("boom")
        assert await self.get_run(uow_factory, run.task_id) is None

    async def test_rollback_discards_and_the_unit_goes_on(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        dropped, kept = _pending(), _pending()
        async with uow_factory() as uow:
            await uow.runs.add(dropped)
            await uow.rollback()
            await uow.runs.add(kept)
            await uow.commit()
        assert await self.get_run(uow_factory, dropped.task_id) is None
        assert await self.get_run(uow_factory, kept.task_id) == kept

    async def test_work_after_commit_needs_its_own_commit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        committed, uncommitted = _pending(), _pending()
        async with uow_factory() as uow:
            await uow.runs.add(committed)
            await uow.commit()
            await uow.runs.add(uncommitted)
        assert await self.get_run(uow_factory, committed.task_id) == committed
        assert await self.get_run(uow_factory, uncommitted.task_id) is None

    async def test_uncommitted_work_is_invisible_to_another_unit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _pending()
        if self.serializes_transactions:
            # One unit at a time: the other unit can only start once this one is gone.
            async with uow_factory() as uow:
                await uow.runs.add(run)
                other = asyncio.create_task(self.get_run(uow_factory, run.task_id))
                await self.until_queued(uow_factory)
                assert not other.done(), "a second unit of work ran inside the first"
            assert await other is None
            return
        async with uow_factory() as writer:
            await writer.runs.add(run)
            assert await self.get_run(uow_factory, run.task_id) is None
            await writer.commit()
        assert await self.get_run(uow_factory, run.task_id) == run

    # -- parsed log ---------------------------------------------------------------------

    async def test_parsed_log_round_trip_location_and_duplicates(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        first_id, retry_id = uid("log"), uid("log")
        task = stored_command(first_id)
        rejected = RejectedBody(reason="invalid_fields: user_id", body_text='{"文件": 1')
        async with uow_factory() as uow:
            first = await uow.parsed_logs.add(first_id, task, at(0))
            retry = await uow.parsed_logs.add(retry_id, rejected, at(1), retry_of_task_id=first_id)
            await uow.commit()
        assert isinstance(first.id, int) and isinstance(retry.id, int)
        assert first.id != retry.id
        async with uow_factory() as uow:
            with pytest.raises(DuplicateTaskId):
                await uow.parsed_logs.add(first_id, rejected, at(2))
            await uow.parsed_logs.set_parsed_location(first_id, "md", "解析/文档.md")
            with pytest.raises(PersistenceError):
                await uow.parsed_logs.set_parsed_location(uid("missing"), "md", "k")
            await uow.parsed_logs.set_parse_outcome(
                first_id, "naive+tesseract", ("OCR: 2 of 2 pages", "页面范围 1-9 cut to 1-2")
            )
            with pytest.raises(PersistenceError):
                await uow.parsed_logs.set_parse_outcome(uid("missing"), "naive", ())
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.parsed_logs.get(first_id)
            stored_retry = await uow.parsed_logs.get(retry_id)
            assert await uow.parsed_logs.get(uid("missing")) is None
        assert stored is not None and stored_retry is not None
        assert (stored.id, stored.task_id, stored.task) == (first.id, first_id, task)
        assert stored_retry.task == rejected
        assert stored.created_at == at(0) and stored.created_at.utcoffset() == timedelta(0)
        assert (stored.parsed_bucket, stored.parsed_object_key) == ("md", "解析/文档.md")
        assert stored.parse_backend == "naive+tesseract"
        assert stored.parse_warnings == ("OCR: 2 of 2 pages", "页面范围 1-9 cut to 1-2")
        assert stored.retry_of_task_id is None
        assert stored_retry == retry

    # -- chunks -------------------------------------------------------------------------

    async def test_replace_and_list_a_document(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        neighbour = scope(doc_id=uid("doc"))
        first = chunk_set(doc, uid("task"))
        kept = chunk_set(neighbour, uid("task"), parents=1)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, first)
            await uow.chunks.replace_document(neighbour, kept)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == first
            assert await uow.chunks.count_document(doc) == len(first)

        second = chunk_set(doc, uid("task"), parents=1, per_parent=2)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, second)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == second
            assert await uow.chunks.list_document(neighbour) == kept
            assert await uow.chunks.count_document(scope()) == 0

    async def test_children_are_paged_in_order(self, uow_factory: UnitOfWorkFactory) -> None:
        doc, neighbour = scope(), scope(doc_id=uid("doc"))
        records = chunk_set(doc, uid("task"), parents=3, per_parent=3)
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, (r for r in records))  # consumed once
            await uow.chunks.replace_document(neighbour, chunk_set(neighbour, uid("task")))
            await uow.commit()
        children = [r for r in records if not r.is_parent]
        pages: list[list[ChunkRecord]] = []
        after = -1
        async with uow_factory() as uow:
            while page := await uow.chunks.list_children(doc, after_order_index=after, limit=4):
                pages.append(page)
                after = page[-1].order_index
            assert await uow.chunks.list_children(scope(), limit=4) == []
        assert [len(p) for p in pages] == [4, 4, 1]
        assert [r for p in pages for r in p] == children

    async def test_replace_is_atomic_with_the_unit(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        original = chunk_set(doc, uid("task"))
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, original)
            await uow.commit()
        with pytest.raises(RuntimeError):
            async with uow_factory() as uow:
                await uow.chunks.replace_document(doc, chunk_set(doc, uid("task"), parents=5))
                raise RuntimeError("crash mid-chunking")
        async with uow_factory() as uow:
            assert await uow.chunks.list_document(doc) == original

    async def test_long_cjk_text_survives(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        record = chunk_set(doc, uid("task"), parents=1, per_parent=0)[0]
        text = ("长文本𠀀測試 emoji 🙂 " * 8000)[:120_000]
        import attrs

        record = attrs.evolve(record, text=text, section_path=("第一章", "引言：背景", ""))
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, [record])
            await uow.commit()
        async with uow_factory() as uow:
            (stored,) = await uow.chunks.list_document(doc)
        assert stored.text == text
        assert stored.section_path == ("第一章", "引言：背景", "")

    async def test_get_many_never_crosses_tenants(self, uow_factory: UnitOfWorkFactory) -> None:
        doc_id = uid("doc")
        mine = scope("u-a", "d-a", doc_id)
        other_user = scope("u-b", "d-a", doc_id)
        other_dataset = scope("u-a", "d-b", doc_id)
        sets = {
            s: chunk_set(s, uid("task"), parents=1, per_parent=2)
            for s in (mine, other_user, other_dataset)
        }
        async with uow_factory() as uow:
            for where, records in sets.items():
                await uow.chunks.replace_document(where, records)
            await uow.commit()
        ids = [r.chunk_id for r in sets[mine]]  # the same ids exist in the other tenants
        async with uow_factory() as uow:
            got = await uow.chunks.get_many("u-a", "d-a", [*reversed(ids), uid("missing")])
            assert got == list(reversed(sets[mine]))
            assert await uow.chunks.get_many("u-a", "d-a", []) == []
            assert await uow.chunks.get_many("u-c", "d-a", ids) == []
            other = await uow.chunks.get_many("u-b", "d-a", ids)
            assert other == sets[other_user]
            assert all(r.scope == other_user for r in other)
            # Moves are scoped too: moving "my" ids leaves the other tenants' rows alone.
            assert await uow.chunks.move_dense(mine, ids, BEGIN_INDEXING) == len(
                children(sets[mine])
            )
            await uow.commit()
        async with uow_factory() as uow:
            for where in (other_user, other_dataset):
                for record in await uow.chunks.list_document(where):
                    assert record.dense_status in (None, ChunkIndexStatus.PENDING)

    async def test_chunk_moves_are_compare_and_set(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=1, per_parent=6)
        parent, kids = records[0], children(records)
        ids = [k.chunk_id for k in kids]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            # the parent has no index status: it never moves
            assert await uow.chunks.move_dense(doc, [parent.chunk_id], BEGIN_INDEXING) == 0
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 6
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 0  # now INDEXING
            assert await uow.chunks.move_dense(doc, ids[:2], COMPLETE) == 2
            assert await uow.chunks.move_dense(doc, ids[2:4], FAIL) == 2
            await uow.commit()
        async with uow_factory() as uow:
            by_id = {r.chunk_id: r for r in await uow.chunks.list_document(doc)}
            assert [by_id[i].dense_status for i in ids] == [
                ChunkIndexStatus.SUCCESS,
                ChunkIndexStatus.SUCCESS,
                ChunkIndexStatus.FAILED,
                ChunkIndexStatus.FAILED,
                ChunkIndexStatus.INDEXING,
                ChunkIndexStatus.INDEXING,
            ]
            assert all(by_id[i].sparse_status is ChunkIndexStatus.PENDING for i in ids)
            assert by_id[parent.chunk_id].dense_status is None
            # PENDING|FAILED -> INDEXING takes the two FAILED only; SUCCESS is never re-done.
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == 2
            assert await uow.chunks.move_dense(doc, ids[:2], FAIL) == 0
            assert await uow.chunks.move_dense(doc, ids, COMPLETE) == 4
            assert await uow.chunks.move_dense(doc, [*ids, *ids], BEGIN_INDEXING) == 0
            assert await uow.chunks.move_dense(doc, [uid("missing")], BEGIN_INDEXING) == 0
            # sparse is independent of dense
            assert await uow.chunks.move_sparse(doc, ids[:3], BEGIN_INDEXING) == 3
            await uow.commit()
        async with uow_factory() as uow:
            stored = [r for r in await uow.chunks.list_document(doc) if not r.is_parent]
        assert all(r.dense_status is ChunkIndexStatus.SUCCESS for r in stored)
        assert [r.sparse_status for r in stored] == [ChunkIndexStatus.INDEXING] * 3 + [
            ChunkIndexStatus.PENDING
        ] * 3

    async def test_a_big_document_moves_in_one_call(self, uow_factory: UnitOfWorkFactory) -> None:
        doc = scope()
        records = chunk_set(doc, uid("task"), parents=30, per_parent=60)
        ids = [r.chunk_id for r in children(records)]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(doc, records)
            assert await uow.chunks.move_dense(doc, ids, BEGIN_INDEXING) == len(ids) == 1800
            assert len(await uow.chunks.get_many(doc.user_id, doc.dataset_id, ids)) == 1800
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_document(doc) == len(records)

    async def test_delete_a_document_and_count_chunks(self, uow_factory: UnitOfWorkFactory) -> None:
        user = uid("u")
        gone, kept = scope(user), scope(user)
        records = chunk_set(gone, "t1")
        async with uow_factory() as uow:
            await uow.chunks.replace_document(gone, records)
            await uow.chunks.replace_document(kept, chunk_set(kept, "t2", parents=1))
            await uow.commit()
        first_child = children(records)[0].chunk_id
        async with uow_factory() as uow:
            assert await uow.chunks.move_dense(gone, [first_child], BEGIN_INDEXING) == 1
            assert await uow.chunks.move_dense(gone, [first_child], COMPLETE) == 1
            assert await uow.chunks.move_sparse(gone, [first_child], BEGIN_INDEXING) == 1
            await uow.commit()
        async with uow_factory() as uow:
            counts = await uow.chunks.document_counts(
                user, "d1", [gone.doc_id, kept.doc_id, "no-such-doc"]
            )
            assert await uow.chunks.document_counts(uid("u"), "d1", [gone.doc_id]) == {}
        assert counts == {
            gone.doc_id: ChunkCounts(parents=2, children=6, dense_indexed=1, sparse_indexed=0),
            kept.doc_id: ChunkCounts(parents=1, children=3, dense_indexed=0, sparse_indexed=0),
        }
        async with uow_factory() as uow:
            assert await uow.chunks.delete_document(gone) == len(records)
            if not self.serializes_transactions:  # uncommitted: another unit still sees them
                async with uow_factory() as other:
                    assert await other.chunks.count_document(gone) == len(records)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_document(gone) == 0
            assert await uow.chunks.delete_document(gone) == 0  # again: nothing, no error
            assert await uow.chunks.count_document(kept) == 4
            assert await uow.chunks.document_counts(user, "d1", [gone.doc_id]) == {}

    async def test_count_user_vectors_counts_children_past_pending(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("u")
        where = scope(user)
        records = chunk_set(where, "t1")
        ids = [c.chunk_id for c in children(records)]
        async with uow_factory() as uow:
            await uow.chunks.replace_document(where, records)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_user_vectors(user) == 0
            assert await uow.chunks.move_dense(where, ids[:3], BEGIN_INDEXING) == 3
            assert await uow.chunks.move_dense(where, ids[:1], COMPLETE) == 1
            assert await uow.chunks.move_dense(where, ids[1:2], FAIL) == 1
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.chunks.count_user_vectors(user) == 3
            assert await uow.chunks.count_user_vectors(uid("u")) == 0

    # -- model configs ------------------------------------------------------------------

    async def test_default_embedding_round_trip_and_replace(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("user")
        first = EmbeddingConfig(
            user,
            "openai",
            "text-embedding-3-small",
            1536,
            "https://api.example.com/v1",
            "sk-first-秘密",
        )
        second = EmbeddingConfig(user, "local", "bge-m3", 1024, None, None)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) is None
            await uow.model_configs.put_default_embedding(first)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == first
            await uow.model_configs.put_default_embedding(second)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == second
            assert await uow.model_configs.default_embedding(uid("user")) is None
        assert "sk-first" not in repr(first)

    async def test_default_chat_round_trip_replace_and_delete(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        user = uid("user")
        chat = ChatConfig(user, "openai", "gpt-4o-mini", "https://api.example.com/v1", "sk-聊天")
        embedding = EmbeddingConfig(user, "openai", "text-embedding-3-small", 1536, None, "sk-e")
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) is None
            await uow.model_configs.put_default_chat(chat)
            await uow.model_configs.put_default_embedding(embedding)
            await uow.commit()
        replaced = ChatConfig(user, "local", "qwen2.5-7b", None, None)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == chat
            assert await uow.model_configs.default_embedding(user) == embedding
            await uow.model_configs.put_default_chat(replaced)
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == replaced
            assert await uow.model_configs.delete_default(user, ModelKind.CHAT) is True
            if not self.serializes_transactions:  # uncommitted: another unit still sees it
                async with uow_factory() as other:
                    assert await other.model_configs.default_chat(user) == replaced
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) is None
            assert await uow.model_configs.default_embedding(user) == embedding
            assert await uow.model_configs.delete_default(user, ModelKind.CHAT) is False
            assert await uow.model_configs.delete_default(user, ModelKind.EMBEDDING) is True
            await uow.rollback()  # the delete is undone
            assert await uow.model_configs.default_embedding(user) == embedding
            assert await uow.model_configs.delete_default(user, ModelKind.EMBEDDING) is True
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) is None
            await uow.model_configs.put_default_chat(chat)  # a deleted default can come back
            await uow.commit()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == chat
        assert "sk-" not in repr(chat)

    # -- outbox -------------------------------------------------------------------------

    async def test_outbox_put_due_and_marks_are_compare_and_set(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        base = datetime(2400, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        early, late = uid("task"), uid("task")
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(late), "results", base + timedelta(seconds=2))
            await uow.outbox.put(a_result(early, user_message="结果"), "results", base)
            await uow.commit()
        async with uow_factory() as uow:
            due = [
                m
                for m in await uow.outbox.due(base + timedelta(seconds=1), 100_000)
                if m.task_id in (early, late)
            ]
            later = [m.task_id for m in await uow.outbox.due(base + timedelta(seconds=2), 100_000)]
        assert [m.task_id for m in due] == [early]
        assert later.index(early) < later.index(late)
        message = due[0]
        assert (message.topic, message.routing_key, message.result) == (
            "results",
            early,
            a_result(early, user_message="结果"),
        )
        assert (message.attempts, message.status, message.last_error) == (0, "PENDING", None)
        assert message.next_attempt_at == base

        async with uow_factory() as uow:
            assert await uow.outbox.mark_sent(message.id, attempts=1) is False  # wrong attempts
            retry_at = base + timedelta(minutes=5)
            assert await uow.outbox.mark_retry(message.id, 0, retry_at, "broker down：超时") is True
            assert await uow.outbox.mark_retry(message.id, 0, retry_at, "again") is False
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.outbox.get(early)
            assert stored is not None
            assert (stored.attempts, stored.status) == (1, "PENDING")
            assert (stored.next_attempt_at, stored.last_error) == (retry_at, "broker down：超时")
            assert early not in [
                m.task_id for m in await uow.outbox.due(base + timedelta(minutes=4), 100_000)
            ]
            assert await uow.outbox.mark_sent(stored.id, 1) is True
            assert await uow.outbox.mark_sent(stored.id, 1) is False
            assert await uow.outbox.mark_dead(stored.id, 2, "late") is False  # not PENDING any more
            await uow.commit()
        async with uow_factory() as uow:
            sent = await uow.outbox.get(early)
            assert sent is not None and (sent.status, sent.attempts) == ("SENT", 2)
            assert sent.last_error is None  # sent: the failure before it is no longer the state
            assert early not in [
                m.task_id for m in await uow.outbox.due(base + timedelta(days=1), 100_000)
            ]
            late_message = await uow.outbox.get(late)
            assert late_message is not None
            assert await uow.outbox.mark_dead(late_message.id, 0, "gave up") is True
            await uow.commit()
        async with uow_factory() as uow:
            dead = await uow.outbox.get(late)
            assert dead is not None and (dead.status, dead.attempts, dead.last_error) == (
                "DEAD",
                1,
                "gave up",
            )
            assert await uow.outbox.get(uid("missing")) is None

    async def test_outbox_keeps_one_row_per_task_and_re_put_resends(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task = uid("task")
        second = a_result(task, status=TaskStatus.FAILED)
        base = datetime(2500, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(task), "results", base)
            await uow.commit()
        async with uow_factory() as uow:
            first = await uow.outbox.get(task)
            assert first is not None
            assert await uow.outbox.mark_dead(first.id, 0, "dead-lettered") is True
            await uow.commit()
        async with uow_factory() as uow:
            await uow.outbox.put(second, "results-2", base + timedelta(hours=1))
            await uow.commit()
        async with uow_factory() as uow:
            again = await uow.outbox.get(task)
            due = [
                m
                for m in await uow.outbox.due(base + timedelta(hours=1), 100_000)
                if m.task_id == task
            ]
        assert again is not None
        assert again.id == first.id
        assert (again.status, again.attempts, again.result, again.topic) == (
            "PENDING",
            0,
            second,
            "results-2",
        )
        assert again.last_error is None
        assert [m.id for m in due] == [first.id]

    async def test_outbox_put_rolls_back_with_the_unit(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task = uid("task")
        async with uow_factory() as uow:
            await uow.outbox.put(a_result(task), "results", T0)
        async with uow_factory() as uow:
            assert await uow.outbox.get(task) is None

    async def test_outbox_claims_are_disjoint_expire_and_end_with_a_mark(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        """Two relays claiming at once get disjoint rows; a claim hides its rows until it
        expires; a mark clears it. (Rows of other tests may be claimed too: only ours are
        asserted on, and disjointness over everything claimed.)"""
        now = datetime(1990, 1, 1, tzinfo=UTC)  # before any other test's rows are due
        lease = timedelta(seconds=60)
        mine = [uid("claim") for _ in range(12)]
        async with uow_factory() as uow:
            for position, task in enumerate(mine):
                due_at = now - timedelta(seconds=position + 1)
                await uow.outbox.put(a_result(task), "results", due_at)
            await uow.commit()
        barrier = None if self.serializes_transactions else asyncio.Barrier(2)

        async def claim(owner: str) -> list[OutboxMessage]:
            async with uow_factory() as uow:
                claimed = await uow.outbox.claim(now, now + lease, owner, limit=5)
                if barrier is not None:
                    await barrier.wait()  # both claims are open at once, neither committed
                await uow.commit()
            return claimed

        first, second = await asyncio.gather(claim(uid("relay-a")), claim(uid("relay-b")))
        assert not {m.id for m in first} & {m.id for m in second}
        claimed_tasks = {m.task_id for m in first + second}
        assert len(claimed_tasks & set(mine)) == 10  # 5 + 5 slots; ours are due first
        assert all(m.claimed_until == now + lease for m in first + second)
        assert {m.claimed_by for m in first} == {first[0].claimed_by}
        async with uow_factory() as uow:
            rest = await uow.outbox.claim(now, now + lease, uid("relay-c"), limit=100_000)
            await uow.commit()
        assert {m.task_id for m in rest} & set(mine) == set(mine) - claimed_tasks
        async with uow_factory() as uow:  # under a live claim: nothing of ours
            held = await uow.outbox.claim(now + lease / 2, now + lease, uid("d"), 100_000)
            assert not {m.task_id for m in held} & set(mine)
            stored = await uow.outbox.get(mine[0])
            assert stored is not None and stored.claimed_by is not None
            assert await uow.outbox.mark_retry(stored.id, 0, now + lease * 4, "later") is True
            await uow.commit()
        async with uow_factory() as uow:  # expired: claimable again, the retried row not yet
            again = await uow.outbox.claim(now + lease, now + lease * 2, uid("e"), 100_000)
            await uow.commit()
        assert {m.task_id for m in again} & set(mine) == set(mine[1:])
        async with uow_factory() as uow:
            retried = await uow.outbox.get(mine[0])
            assert retried is not None
            assert (retried.claimed_by, retried.claimed_until) == (None, None)
            for message in again:
                if message.task_id in mine:
                    assert await uow.outbox.mark_sent(message.id, message.attempts) is True
            await uow.commit()
        async with uow_factory() as uow:
            sent = await uow.outbox.get(mine[1])
            assert sent is not None and sent.status == "SENT" and sent.claimed_by is None

    async def test_outbox_redrive_lists_and_counts(self, uow_factory: UnitOfWorkFactory) -> None:
        dead_task, pending_task = uid("dead"), uid("pending")
        async with uow_factory() as uow:
            before = dict(await uow.outbox.count_by_status())
            await uow.outbox.put(a_result(dead_task), "results", T0)
            await uow.outbox.put(a_result(pending_task), "results", T0)
            await uow.commit()
        async with uow_factory() as uow:
            dead_row = await uow.outbox.get(dead_task)
            assert dead_row is not None
            assert await uow.outbox.redrive(dead_task, T0) is False  # PENDING, not DEAD
            assert await uow.outbox.mark_dead(dead_row.id, 0, "RESULT_NOTIFY_FAILED:gone")
            await uow.commit()
        async with uow_factory() as uow:
            counts = await uow.outbox.count_by_status()
            assert counts.get("DEAD", 0) == before.get("DEAD", 0) + 1
            assert counts.get("PENDING", 0) == before.get("PENDING", 0) + 1
            (listed,) = await uow.outbox.list_messages("DEAD", dead_task)
            assert listed.status == "DEAD" and listed.attempts == 1
            assert listed.last_error == "RESULT_NOTIFY_FAILED:gone"
            assert await uow.outbox.list_messages("PENDING", dead_task) == []
            both = await uow.outbox.list_messages(after_id=dead_row.id - 1, limit=100_000)
            assert [m.task_id for m in both][:2] == [dead_task, pending_task]
            page = await uow.outbox.list_messages(after_id=dead_row.id, limit=1)
            assert [m.task_id for m in page] == [pending_task]
            for past in (2**31, 2**63 - 1):  # any after_id a caller may name: nothing after it
                assert await uow.outbox.list_messages(after_id=past) == []
        later = T0 + timedelta(hours=1)
        async with uow_factory() as uow:
            assert await uow.outbox.redrive(dead_task, later) is True
            assert await uow.outbox.redrive(dead_task, later) is False  # already PENDING
            await uow.commit()
        async with uow_factory() as uow:
            redriven = await uow.outbox.get(dead_task)
            assert redriven is not None
            assert (redriven.status, redriven.attempts) == ("PENDING", 0)
            assert redriven.next_attempt_at == later
            assert redriven.last_error == "RESULT_NOTIFY_FAILED:gone"  # kept for the record
            assert dead_task in {m.task_id for m in await uow.outbox.due(later, 100_000)}
            assert await uow.outbox.redrive(uid("missing"), later) is False

    # -- the retry race (invariant 6 of docs/design/0002-run-state-machine.md)
    # -----------------------------------------------------

    async def _contend(
        self,
        factory: UnitOfWorkFactory,
        previous_id: str,
        new_id: str,
        barrier: asyncio.Barrier | None,
    ) -> tuple[bool, RetryRefusal | None]:
        """One retry, as the use case runs it: read, supersede by CAS, write the new run.
        Returns whether it won and what the domain check said on the snapshot it read."""
        async with factory() as uow:
            previous = await uow.runs.get(previous_id)
            assert previous is not None
            refusal = retry_refusal(previous, new_id)
            if barrier is not None:
                await asyncio.wait_for(barrier.wait(), timeout=30)
            won = await uow.runs.mark_superseded(previous_id, new_id)
            if won:
                assert refusal is None
                previous.supersede(new_id)
                await uow.runs.add(previous.derive_retry(new_id, at(100)))
                await uow.commit()
                return True, refusal
            await uow.rollback()
            loser = ParseRun.retry_loser(
                identity(new_id), previous_id, RetryRefusal.CONCURRENT_SUPERSEDE, at(100)
            )
            await uow.runs.add(loser)
            await uow.commit()
            return False, refusal

    async def test_two_concurrent_retries_exactly_one_wins(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        for _ in range(self.race_rounds):
            previous = run_until_failed_at(Stage.CHUNKING)
            await self.add_run(uow_factory, previous)
            contenders = [uid("retry-a"), uid("retry-b")]
            barrier = None if self.serializes_transactions else asyncio.Barrier(2)
            results = await asyncio.gather(
                *(self._contend(uow_factory, previous.task_id, c, barrier) for c in contenders)
            )
            outcomes = [won for won, _ in results]
            assert sorted(outcomes) == [False, True], outcomes
            if barrier is not None:
                # A real race: both read the run as retryable before either wrote, so only
                # the storage compare-and-set told them apart.
                assert [refusal for _, refusal in results] == [None, None]
            winner, loser = contenders if outcomes[0] else list(reversed(contenders))
            async with uow_factory() as uow:
                old = await uow.runs.get(previous.task_id)
                won = await uow.runs.get(winner)
                lost = await uow.runs.get(loser)
            assert old is not None and won is not None and lost is not None
            assert old.superseded_by_task_id == winner
            assert old.version == previous.version + 1  # superseded exactly once
            assert old.pipeline_status is PipelineStatus.FAILED
            assert won.retry_of_task_id == previous.task_id
            assert won.pipeline_status is PipelineStatus.PENDING
            assert won.stages[Stage.CLEANING].inherited
            assert won.status_of(Stage.CLEANING) is StageStatus.SUCCESS
            assert won.status_of(Stage.CHUNKING) is StageStatus.PENDING
            assert won.markdown == MD
            assert lost.pipeline_status is PipelineStatus.FAILED
            assert lost.failed_stage is FailurePoint.RETRY_VALIDATION
            assert lost.failure_reason == FailureReason.of(
                FailureCode.RETRY_VALIDATION_FAILED, RetryRefusal.CONCURRENT_SUPERSEDE.value
            )
            assert lost.superseded_by_task_id is None

    async def test_two_concurrent_saves_of_one_version_exactly_one_lands(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        run = _pending()
        await self.add_run(uow_factory, run)
        barrier = None if self.serializes_transactions else asyncio.Barrier(2)

        async def contender(stage_detail: str) -> ParseRun | None:
            async with uow_factory() as uow:
                current = await uow.runs.get(run.task_id)
                assert current is not None
                loaded = current.version
                if barrier is not None:
                    await asyncio.wait_for(barrier.wait(), timeout=30)
                if current.pipeline_status is not PipelineStatus.PENDING:
                    return None  # serialized store: it already sees the other's write
                current.reject(FailureCode.INVALID_TASK_CONTEXT, stage_detail, at(5))
                try:
                    await uow.runs.save(current, loaded)
                except ConcurrentUpdate:
                    return None
                await uow.commit()
                return current

        landed = [r for r in await asyncio.gather(contender("甲"), contender("乙")) if r]
        assert len(landed) == 1
        assert await self.get_run(uow_factory, run.task_id) == landed[0]
        assert landed[0].version == run.version + 1


class EncryptedApiKeysContract:
    """Capability: API keys are encrypted at rest, and units of work holding a different
    secret fail clearly instead of returning garbage. Needs `uow_factory` (from the base
    contract) plus the two fixtures below."""

    @pytest.fixture
    def other_key_uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass: same database, a different API-key secret")

    @pytest.fixture
    def stored_api_key(self) -> StoredApiKey:
        raise NotImplementedError("subclass: read the raw stored api-key column")

    async def test_api_key_is_encrypted_at_rest_and_a_wrong_key_fails_clearly(
        self,
        uow_factory: UnitOfWorkFactory,
        other_key_uow_factory: UnitOfWorkFactory,
        stored_api_key: StoredApiKey,
    ) -> None:
        user = uid("user")
        plaintext = "sk-live-" + uuid.uuid4().hex
        config = EmbeddingConfig(user, "openai", "text-embedding-3-large", 3072, None, plaintext)
        async with uow_factory() as uow:
            await uow.model_configs.put_default_embedding(config)
            await uow.commit()
        raw = await stored_api_key(user)
        assert raw is not None and raw != ""
        assert plaintext not in raw
        assert plaintext[8:] not in raw
        async with other_key_uow_factory() as uow:
            with pytest.raises(PersistenceError) as raised:
                await uow.model_configs.default_embedding(user)
        assert plaintext not in str(raised.value)
        assert "key" in str(raised.value).lower()
        async with uow_factory() as uow:
            assert await uow.model_configs.default_embedding(user) == config

    async def test_chat_api_key_is_encrypted_at_rest_too(
        self,
        uow_factory: UnitOfWorkFactory,
        other_key_uow_factory: UnitOfWorkFactory,
        stored_api_key: StoredApiKey,
    ) -> None:
        user = uid("user")
        plaintext = "sk-chat-" + uuid.uuid4().hex
        config = ChatConfig(user, "openai", "gpt-4o", None, plaintext)
        async with uow_factory() as uow:
            await uow.model_configs.put_default_chat(config)
            await uow.commit()
        raw = await stored_api_key(user)
        assert raw is not None and plaintext not in raw and plaintext[8:] not in raw
        async with other_key_uow_factory() as uow:
            with pytest.raises(PersistenceError) as raised:
                await uow.model_configs.default_chat(user)
        assert plaintext not in str(raised.value)
        async with uow_factory() as uow:
            assert await uow.model_configs.default_chat(user) == config


class UnavailableDatabaseContract:
    """A database that does not answer (closed port, lock held past the busy timeout) is
    DatabaseUnavailable, a DependencyUnavailable the task consumer holds the backlog for,
    never a plain PersistenceError it would dead-letter the message for (issue 19).

    Fixture: `unavailable_uow_factory`, a factory whose database does not answer."""

    @pytest.fixture
    def unavailable_uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass: a factory over a database that does not answer")

    async def test_a_database_that_does_not_answer_is_unavailable(
        self, unavailable_uow_factory: UnitOfWorkFactory
    ) -> None:
        with pytest.raises(DatabaseUnavailable) as raised:
            async with unavailable_uow_factory() as uow:
                await uow.runs.get(uid("task"))
                await uow.commit()
        assert raised.value.dependency == "database"
        assert isinstance(raised.value, PersistenceError)  # callers of the store error too
