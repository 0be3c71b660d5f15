"""The broker path applies the reference rule (docs/security.md): a message from any producer
naming the parse cache's area as its Markdown or image target, or its own source as its
Markdown, is FAILED INVALID_TASK_CONTEXT with the refusal as its reason, before any stage
reads or writes an object."""

from __future__ import annotations

from typing import Any

import pytest

from ragline.application.tasks import TaskStatus
from ragline.domain.parse_run import FailureCode, FailurePoint, MarkdownLocation, PipelineStatus
from tests.fakes.harness import SOURCE_BUCKET, Harness

CACHE = "parse-cache"  # ParseCacheSettings' default bucket and prefix, as the harness wires it
PAGE = "v1/pages/ab/abcd/basic/1.json"


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (
            {"md_bucket": CACHE, "md_object_key": PAGE},
            "md: names an area only ragline writes (the parse cache)",
        ),
        (
            {"md_bucket": SOURCE_BUCKET, "md_object_key": "files/doc-100.txt"},
            "md: must not be the task's own source",
        ),
        (
            {"image_bucket": CACHE, "image_prefix": "v1/pages/ab/"},
            "image: names an area only ragline writes (the parse cache)",
        ),
        ({"image_bucket": CACHE, "image_prefix": "/"}, "image: encloses an area only ragline"),
    ],
)
async def test_a_task_naming_what_no_producer_may_fails_before_any_write(
    h: Harness, overrides: dict[str, Any], reason: str
) -> None:
    h.storage.add(CACHE, PAGE, b'{"first": 1, "pages": ["the cached page"]}')
    task = h.task("txt", **overrides)
    before = dict(h.storage.objects)
    outcome = await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failed_stage is FailurePoint.TASK_VALIDATION
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.INVALID_TASK_CONTEXT
    assert run.failure_reason.detail.startswith(reason), run.failure_reason.detail
    assert outcome.detail is not None and outcome.detail.startswith(reason)
    assert h.storage.objects == before  # nothing read into a target, nothing written
    assert h.storage.downloads == []
    result = h.result(task.task_id)
    assert result.task_status is TaskStatus.FAILED
    assert result.failure_reason is not None and reason in result.failure_reason


async def test_a_retry_naming_the_cache_is_refused_like_a_first_attempt(h: Harness) -> None:
    first = h.task("txt", upload=False)
    await h.pipeline.handle(first)  # FAILED SOURCE_FILE_NOT_FOUND: retryable
    h.storage.add(SOURCE_BUCKET, first.source_object_key, b"now it exists")
    retry = h.retry_of(first, md_bucket=CACHE, md_object_key=PAGE)
    await h.pipeline.handle(retry)
    reason = h.run(retry.task_id).failure_reason
    assert reason is not None and reason.code is FailureCode.INVALID_TASK_CONTEXT
    assert (CACHE, PAGE) not in h.storage.objects
    assert h.run(first.task_id).superseded_by_task_id is None  # the first may still be retried


async def test_a_markdown_source_naming_itself_as_its_markdown_still_runs(h: Harness) -> None:
    """md/markdown sources are passed through (nothing is written to md_*): their md fields,
    often the source itself as a re-index sends them, are not targets."""
    key = "files/doc-100.md"
    task = h.task("md", md_bucket=SOURCE_BUCKET, md_object_key=key, source_object_key=key)
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS


async def test_a_producer_may_name_any_other_object(h: Harness) -> None:
    """The broker's producer is the trusted service: another bucket, another user's prefix."""
    h.storage.buckets.add("elsewhere")
    task = h.task("txt", md_bucket="elsewhere", md_object_key="2002/their.md")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert h.storage.data("elsewhere", "2002/their.md")


async def test_a_run_records_the_source_its_task_names_and_a_refused_one_none(
    h: Harness,
) -> None:
    """What a document delete later asks (objects_in_use): the sources runs name."""
    first = h.task("txt", upload=False)
    await h.pipeline.handle(first)  # FAILED SOURCE_FILE_NOT_FOUND, its source recorded still
    source = MarkdownLocation(SOURCE_BUCKET, first.source_object_key)
    assert h.db.parsed_logs[first.task_id].source == source
    retry = h.retry_of(first)
    await h.pipeline.handle(retry)
    assert h.db.parsed_logs[retry.task_id].source == source
    refused = h.task("txt", md_bucket=CACHE, md_object_key=PAGE)
    await h.pipeline.handle(refused)
    assert h.db.parsed_logs[refused.task_id].source is None
