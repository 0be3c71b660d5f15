"""The use cases check every reference before any work: a refused submit publishes nothing,
a refused retry or re-index publishes nothing, and an ingest whose configured buckets name the
parse cache's area uploads nothing (the CLI is the operator: the service's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.messaging.inprocess.endpoints import InProcessEndpoints
from ragline.adapters.wire_format.json import JsonTaskPublisher
from ragline.application.access import Caller, ObjectArea, ReferencePolicy, ReferenceRefused
from ragline.application.debug import SubmitTask
from ragline.application.documents import ReindexDocument
from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import IngestFiles
from ragline.application.runs import CheckTaskId, RetryRun
from tests.fakes.harness import Harness
from tests.fakes.messaging import FakePublisher
from tests.pipeline.test_ingest_progress import Recorder

TENANT = Caller.tenant("7")  # the harness's tasks are user 7's, under keys not its prefix


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness


async def test_a_refused_submit_publishes_nothing(h: Harness) -> None:
    tasks = FakePublisher()
    submit = SubmitTask(JsonTaskPublisher(tasks), h.references, CheckTaskId(h.db))
    with pytest.raises(ReferenceRefused, match=r"^source: bucket 'uploads' is not open"):
        await submit(TENANT, h.task(upload=False))
    with pytest.raises(ReferenceRefused, match=r"^user_id: must be the token's own user"):
        await submit(Caller.tenant("8"), h.task(upload=False))
    assert tasks.published == []
    assert await submit(Caller.service(), h.task(upload=False)) == f"task-{h.counter}"
    assert len(tasks.published) == 1


async def test_a_retry_or_reindex_of_a_stored_task_is_checked_for_who_asks(h: Harness) -> None:
    """The stored task names the service's layout (the harness's `uploads/files/...`): its
    tenant may not have it retried or re-indexed; the service may."""
    failed = h.task(upload=False)
    await h.pipeline.handle(failed)
    bus = InProcessEndpoints("tasks", "results")
    retry = RetryRun(h.db, JsonTaskPublisher(bus.task_publisher()), h.references, poll_seconds=0.01)
    with pytest.raises(ReferenceRefused, match=r"^source: "):
        await retry.retry_task(TENANT, failed.task_id)
    assert (await retry.retry_task(Caller.service(), failed.task_id)).is_retry

    done = h.task(original_file_id=101, md_object_key="md/doc-101.md")
    await h.pipeline.handle(done)
    tasks = FakePublisher()
    reindex = ReindexDocument(h.db, JsonTaskPublisher(tasks), h.references)
    with pytest.raises(
        ReferenceRefused, match=r"^source: key must start with the caller's prefix 7/"
    ):
        await reindex(TENANT, "7", "3", "101")
    assert tasks.published == []
    await reindex(Caller.service(), "7", "3", "101")
    assert len(tasks.published) == 1


async def test_an_ingest_configured_into_the_parse_cache_uploads_nothing(
    h: Harness, tmp_path: Path
) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("some words")
    source = SourceFile(str(file), "notes.txt", "txt", file.stat().st_size, "ab" * 32)
    tasks = FakePublisher()
    ingest = IngestFiles(
        h.db,
        h.storage,
        JsonTaskPublisher(tasks),
        h.clock,
        source_bucket="sources",
        md_bucket="parse-cache",  # the whole bucket is the cache's below
        references=ReferencePolicy.of(["sources"], [ObjectArea("parse-cache")]),
    )
    with pytest.raises(ReferenceRefused, match=r"^md: names an area only ragline writes"):
        await ingest([source], "1", "1", Recorder())
    assert not [key for key in h.storage.objects if key[0] == "sources"]
    assert tasks.published == []
