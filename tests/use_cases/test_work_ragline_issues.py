"""Issue 19 item 6: what the back end receives for work it did not ask for.

An operator's retry (`ragline retry`, `POST /runs/{id}/retry`) and a re-index are tasks
ragline issues itself (`issued_by: ragline`) under task ids the producer never issued
(`-r<N>`, `-x<N>`): their runs answer nobody on the result topic (no outbox row, so no
ParseResult), while every run the producer asked for still gets exactly one. A re-index
keeps the document's source filename (an HTML document stays `guide.html`, not `guide.md`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.inbound.task_consumer import Worker
from ragline.adapters.messaging.inprocess.endpoints import InProcessEndpoints
from ragline.adapters.wire_format.json import JsonResultPublisher, JsonTaskPublisher
from ragline.application.access import Caller
from ragline.application.documents import ListDocuments, NotReindexable, ReindexDocument
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.runs import RetryRun
from ragline.application.tasks import TaskIssuer, TaskStatus
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness
from tests.fakes.messaging import FakePublisher

OPERATOR = Caller.service()


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness


async def test_a_producer_task_is_answered_and_a_task_ragline_issues_is_not(h: Harness) -> None:
    asked = h.task()
    await h.pipeline.handle(asked)
    assert h.db.outbox_row(asked.task_id) is not None

    own = h.task(original_file_id=101, md_object_key="md/doc-101.md").issued(TaskIssuer.RAGLINE)
    await h.pipeline.handle(own)
    assert h.run(own.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.db.outbox_row(own.task_id) is None
    await h.pipeline.handle(own)  # a redelivery of it: still nothing to publish
    assert h.db.outbox_row(own.task_id) is None and h.db.outbox_puts[own.task_id] == 0


async def test_an_operator_retry_is_answered_from_the_database_and_publishes_nothing(
    h: Harness,
) -> None:
    failed = h.task(upload=False)  # the source is missing: CLEANING fails
    await h.pipeline.handle(failed)
    assert h.db.outbox_row(failed.task_id) is not None  # the producer's FAILED answer
    h.storage.add(failed.source_bucket, failed.source_object_key, b"now it is here, in words.")
    bus = InProcessEndpoints("tasks", "results")
    relay = OutboxRelay(h.db, JsonResultPublisher(bus.result_publisher()), h.clock)
    retry = RetryRun(h.db, JsonTaskPublisher(bus.task_publisher()), h.references, poll_seconds=0.01)
    async with Worker(h.pipeline, h.wire, bus, relay).running():
        result = await retry(OPERATOR, failed.task_id, timeout_seconds=30)
    assert result.task_id == f"{failed.task_id}-r1"
    assert result.task_status is TaskStatus.SUCCESS
    assert result.document_parsed_log_id > 0
    assert h.db.outbox_row(result.task_id) is None  # the producer never issued this id


async def test_a_reindex_keeps_the_source_filename_and_answers_nobody(h: Harness) -> None:
    page = "<html><body><h1>Guide</h1><p>Brew green tea at eighty degrees.</p></body></html>"
    task = h.task("html", source_filename="guide.html", content=page)
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    tasks = FakePublisher()
    reindex = await ReindexDocument(h.db, JsonTaskPublisher(tasks), h.references)(
        OPERATOR, "7", "3", "100"
    )
    assert reindex.file_type == "md"  # read as the stored Markdown, never parsed again
    assert reindex.source_filename == "guide.html"  # the document's name, as uploaded
    assert reindex.issued_by is TaskIssuer.RAGLINE
    [(_, body)] = tasks.published
    assert h.wire.decode_task(body) == reindex
    await h.pipeline.handle(reindex)
    run = h.run(reindex.task_id)
    assert run.pipeline_status is PipelineStatus.SUCCESS, run.failure_reason
    assert h.db.outbox_row(reindex.task_id) is None


# -- issue 19 item 4: the document's state is its index owner's ------------------------


async def test_a_refused_retry_neither_fails_the_document_nor_blocks_its_reindex(
    h: Harness,
) -> None:
    task = h.task()
    await h.pipeline.handle(task)
    refused = h.retry_of(task)  # a retry of a SUCCESS run: refused, an audit run of its own
    await h.pipeline.handle(refused)
    assert h.run(refused.task_id).pipeline_status is PipelineStatus.FAILED
    [document] = (await ListDocuments(h.db)("7", "3")).documents
    assert document.latest_run.task_id == refused.task_id  # the newest attempt
    assert document.indexed_run is not None and document.indexed_run.task_id == task.task_id
    assert document.state is PipelineStatus.SUCCESS  # fully indexed, not FAILED
    tasks = FakePublisher()
    reindex = await ReindexDocument(h.db, JsonTaskPublisher(tasks), h.references)(
        OPERATOR, "7", "3", "100"
    )
    assert reindex.task_id == f"{task.task_id}-x1"
    assert reindex.source_object_key == task.md_object_key  # the indexed run's Markdown
    await h.pipeline.handle(reindex)
    [document] = (await ListDocuments(h.db)("7", "3")).documents
    assert document.indexed_run is not None and document.indexed_run.task_id == reindex.task_id
    assert document.state is PipelineStatus.SUCCESS


async def test_a_new_version_failing_after_chunking_leaves_the_old_one_indexed(
    h: Harness,
) -> None:
    first = h.task()
    await h.pipeline.handle(first)
    h.faults.arm("vectors.upsert_dense", ConnectionError("qdrant is down"), None)
    broke = h.task(md_object_key="md/doc-100-v2.md")  # a new upload: a new chunk lineage
    await h.pipeline.handle(broke)
    assert h.run(broke.task_id).pipeline_status is PipelineStatus.FAILED
    [document] = (await ListDocuments(h.db)("7", "3")).documents
    assert document.indexed_run is not None and document.indexed_run.task_id == first.task_id
    assert document.state is PipelineStatus.SUCCESS  # the old version still answers


async def test_a_document_never_indexed_has_the_state_of_its_newest_run(h: Harness) -> None:
    failed = h.task(upload=False)
    await h.pipeline.handle(failed)
    [document] = (await ListDocuments(h.db)("7", "3")).documents
    assert document.indexed_run is None and document.state is PipelineStatus.FAILED
    with pytest.raises(NotReindexable):
        await ReindexDocument(h.db, JsonTaskPublisher(FakePublisher()), h.references)(
            OPERATOR, "7", "3", "100"
        )
