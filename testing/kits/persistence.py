"""What the persistence kits share: their one fixture, sample runs and chunks, helpers.

Each repository port has its kit (`runs`, `documents`, `parsed_logs`, `chunks`,
`model_configs`, `outbox`, `parse_batches`) and the unit of work has its own
(`unit_of_work`); every kit is a `StoreContract`, whose one factory is the `uow_factory`
fixture (a repository lives inside a unit of work: the kit opens units to reach it), as
eventsourcing's recorder test cases each ask one `create_recorder()`. An adapter subclasses
each kit once and provides the fixture:

    class TestMyRuns(ParseRunRepositoryContract):
        @pytest.fixture
        async def uow_factory(self) -> AsyncIterator[UnitOfWorkFactory]:
            ...  # units of work on a migrated database

The database may be shared by every test of a session: each test works under fresh ids.
Set `serializes_transactions = True` when the store admits one unit of work at a time
(SQLite with BEGIN IMMEDIATE): the race tests then cannot make both contenders read before
either writes, and check the same outcome without forcing that interleaving. Such a store
also overrides `until_queued(factory)` (return once a second unit waits for the open one).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import ClassVar

import attrs
import pytest

from ragline.application.ports.parser import PdfParserBackend
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import (
    ParseTaskCommand,
    RejectedBody,
    TaskIssuer,
    TaskResult,
    TaskStatus,
    TriggerMode,
)
from ragline.domain.parse_run import (
    ChunkIndexStatus,
    FailureCode,
    MarkdownLocation,
    ParseRun,
    RetryRefusal,
    Stage,
    TaskIdentity,
)

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


def pending_run() -> ParseRun:
    return ParseRun.open(identity(), at(0))


def processing_run() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.start_stage(Stage.CLEANING, at(1))
    run.succeed_stage(Stage.CLEANING, at(2), duration_ms=1000, markdown=MD)
    run.start_stage(Stage.CHUNKING, at(3))
    return run


def succeeded_run() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    for index, stage in enumerate(Stage):
        run.start_stage(stage, at(index + 1))
        markdown = MD if stage is Stage.CLEANING else None
        run.succeed_stage(stage, at(index + 1.5), duration_ms=500, markdown=markdown)
    return run


def failed_mid_run() -> ParseRun:
    return run_until_failed_at(Stage.VECTORIZING)


def rejected_run() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.reject(FailureCode.INVALID_TASK_CONTEXT, "file_type 与文件记录不一致", at(1))
    return run


def long_reason_run() -> ParseRun:
    run = ParseRun.open(identity(), at(0))
    run.start_stage(Stage.CLEANING, at(1))
    run.fail_stage(Stage.CLEANING, FailureCode.PARSE_ENGINE_FAILED, "错误" * 600, at(2), 1000)
    assert run.failure_reason is not None and run.failure_reason.truncated
    return run


def interrupted_run() -> ParseRun:
    run = processing_run()
    run.converge_interrupted(at(9), "重投时发现未完成")
    return run


def inherited_retry_run() -> ParseRun:
    previous = run_until_failed_at(Stage.PRETOKENIZE)
    new_id = uid("retry")
    previous.supersede(new_id)
    run = previous.derive_retry(new_id, at(20))
    run.skip_inherited_stage(Stage.CLEANING, at(21))
    return run


def retry_loser_run() -> ParseRun:
    return ParseRun.retry_loser(identity(), uid("old"), RetryRefusal.CONCURRENT_SUPERSEDE, at(5))


def superseded_run() -> ParseRun:
    run = run_until_failed_at(Stage.CHUNKING)
    run.supersede(uid("retry"))
    return run


def other_time_zone_run() -> ParseRun:
    run = ParseRun.open(identity(), T0.astimezone(timezone(timedelta(hours=8))))
    run.start_stage(Stage.CLEANING, at(1).astimezone(timezone(timedelta(hours=-5))))
    return run


RUN_STATES: dict[str, Callable[[], ParseRun]] = {
    "pending": pending_run,
    "processing": processing_run,
    "succeeded": succeeded_run,
    "failed-mid-run-cjk": failed_mid_run,
    "rejected-task-validation": rejected_run,
    "failed-long-reason-truncated": long_reason_run,
    "interrupted": interrupted_run,
    "retry-with-inherited-stages": inherited_retry_run,
    "retry-loser": retry_loser_run,
    "superseded": superseded_run,
    "non-utc-times": other_time_zone_run,
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


class StoreContract:
    """The base of every persistence kit: the `uow_factory` fixture and shared helpers."""

    serializes_transactions: ClassVar[bool] = False

    race_rounds: ClassVar[int] = 6

    @pytest.fixture
    def uow_factory(self) -> UnitOfWorkFactory:
        raise NotImplementedError("subclass and return a factory on a migrated database")

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
