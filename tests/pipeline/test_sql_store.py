"""The same use case on the real SQL unit of work (SQLite file, migrated from empty): the
fake store's semantics are the ones the adapter gives."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import attrs
import pytest

from ragline.adapters.persistence.sql import ApiKeyCipher, upgrade_to_head
from ragline.adapters.persistence.sql.unit_of_work import (
    SqlUnitOfWorkFactory,
    create_unit_of_work_factory,
)
from ragline.adapters.wire_format.json import JsonResultPublisher
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.pipeline.outcome import OutcomeKind
from ragline.application.ports.keyword_index import KeywordWriteFailed
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.tasks import TaskStatus
from ragline.domain.parse_run import ChunkIndexStatus, PipelineStatus, RetryRefusal, Stage
from ragline.testing.parse_run import check_family, check_run
from tests.fakes.harness import DIMENSION, Harness, decode_result


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database migrated from empty; each test works on a copy."""
    path = tmp_path_factory.mktemp("sql") / "template.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


@pytest.fixture
async def sql(migrated: Path, tmp_path: Path) -> AsyncIterator[SqlUnitOfWorkFactory]:
    path = tmp_path / "ragline.db"
    shutil.copyfile(migrated, path)
    url = f"sqlite:///{path}"
    factory = create_unit_of_work_factory(url, cipher=ApiKeyCipher(ApiKeyCipher.generate_key()))
    yield factory
    await factory.dispose()


async def _on_sql(h: Harness, sql: SqlUnitOfWorkFactory) -> ParseTaskPipeline:
    async with sql() as uow:
        await uow.model_configs.put_default_embedding(
            EmbeddingConfig("7", "fake", "fake-model", DIMENSION, api_key="k")
        )
        await uow.commit()
    return ParseTaskPipeline(attrs.evolve(h.services, uow=sql))


async def test_success_redelivery_and_relay_on_sqlite(
    h: Harness, sql: SqlUnitOfWorkFactory
) -> None:
    pipeline = await _on_sql(h, sql)
    task = h.task()
    assert (await pipeline.handle(task)).kind is OutcomeKind.RAN
    assert (await pipeline.handle(task)).kind is OutcomeKind.RESENT
    async with sql() as uow:
        run = await uow.runs.get(task.task_id)
        chunks = await uow.chunks.list_document(h.scope(task))
    assert run is not None and run.pipeline_status is PipelineStatus.SUCCESS
    check_run(run)
    kids = [c for c in chunks if not c.is_parent]
    assert {(c.dense_status, c.sparse_status) for c in kids} == {
        (ChunkIndexStatus.SUCCESS, ChunkIndexStatus.SUCCESS)
    }
    relay = OutboxRelay(sql, JsonResultPublisher(h.publisher), h.clock)
    h.clock.advance(timedelta(days=1))
    assert (await relay.relay_once()).sent == 1
    (published,) = h.publisher.published
    assert decode_result(published[1]).task_status is TaskStatus.SUCCESS


async def test_resume_and_racing_retries_on_sqlite(h: Harness, sql: SqlUnitOfWorkFactory) -> None:
    pipeline = await _on_sql(h, sql)
    h.faults.arm("keywords.write", KeywordWriteFailed("bulk error"))
    first = h.task()
    await pipeline.handle(first)
    h.faults.disarm()
    a, b = h.retry_of(first), h.retry_of(first)
    outcomes = await asyncio.gather(pipeline.handle(a), pipeline.handle(b))
    assert sorted(o.kind.value for o in outcomes) == ["ran", "retry_refused"]
    (loser,) = [o for o in outcomes if o.kind is OutcomeKind.RETRY_REFUSED]
    assert loser.detail in {
        RetryRefusal.CONCURRENT_SUPERSEDE.value,
        RetryRefusal.ALREADY_SUPERSEDED.value,
    }
    async with sql() as uow:
        runs = {t.task_id: await uow.runs.get(t.task_id) for t in (first, a, b)}
    stored = {k: v for k, v in runs.items() if v is not None}
    assert len(stored) == 3
    for run in stored.values():
        check_run(run)
    check_family(stored)
    winner = next(
        r for r in stored.values() if r.retry_of_task_id and r.stages[Stage.CLEANING].inherited
    )
    assert winner.pipeline_status is PipelineStatus.SUCCESS
    assert [s for s, st in winner.stages.items() if st.inherited] == list(Stage)[:4]
