"""The tables the Java side reads under the seeds' names (migration 0008_java_views): views
`document_parsed_log` and `document_parse_pipeline` over ragline's parsed_log and parse_run,
with the seeds' column names, queried with the seeds' own questions on SQLite, PostgreSQL
and MariaDB after the real pipeline wrote the rows
(docs/wire-contracts.md#tables-the-business-side-reads)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    SqlUnitOfWorkFactory,
    create_sync_engine_for,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.ports.keyword_index import KeywordWriteFailed
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import DIMENSION, SOURCE_BUCKET, Harness

from .conftest import (
    create_mariadb_database,
    create_postgres_database,
    drop_mariadb_database,
    drop_postgres_database,
)

ROOT = Path(__file__).resolve().parents[3]

PARSED_LOG_COLUMNS = [
    "id",
    "task_id",
    "parsed_bucket_name",
    "parsed_object_key",
    "retry_of_task_id",
    "source_bucket",
    "source_object_key",
    "parse_backend",
    "created_at",
    "document_parse_pipeline_id",
    "original_file_id",
    "document_parse_task_id",
    "user_id",
    "dataset_id",
    "file_type",
]
STAGES = ("cleaning", "chunking", "vectorizing", "pretokenize", "es_indexing", "sparse_vectorizing")
PIPELINE_COLUMNS = [
    "id",
    "task_id",
    "document_parsed_log_id",
    "original_file_id",
    "document_parse_task_id",
    "user_id",
    "dataset_id",
    "file_type",
    "pipeline_status",
    *(f"{stage}_{what}" for stage in STAGES for what in ("status", "duration_ms")),
    "failed_stage",
    "recover_from_stage",
    "failure_reason",
    "created_at",
    "started_at",
    "finished_at",
    "retry_of_task_id",
    "superseded_by_task_id",
]
VIEWS = {"document_parsed_log": PARSED_LOG_COLUMNS, "document_parse_pipeline": PIPELINE_COLUMNS}


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of this module's own on each backend, migrated from empty."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('views') / 'ragline.db'}"
        upgrade_to_head(url)
        yield url
    elif request.param == "postgresql":
        name = create_postgres_database()
        try:
            url = f"postgresql://postgres@127.0.0.1:5432/{name}"
            upgrade_to_head(url)
            yield url
        finally:
            drop_postgres_database(name)
    else:
        name = create_mariadb_database()
        try:
            url = f"mysql://root@127.0.0.1:3306/{name}"
            upgrade_to_head(url)
            yield url
        finally:
            drop_mariadb_database(name)


@pytest.fixture(scope="module")
def engine(database_url: str) -> Iterator[Engine]:
    engine = create_sync_engine_for(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
async def sql(database_url: str) -> AsyncIterator[SqlUnitOfWorkFactory]:
    factory = create_unit_of_work_factory(
        database_url, cipher=ApiKeyCipher(ApiKeyCipher.generate_key())
    )
    yield factory
    await factory.dispose()


def _one(engine: Engine, query: str, **params: Any) -> tuple[Any, ...]:
    with engine.connect() as conn:
        rows = conn.execute(text(query), params).all()
    assert len(rows) == 1, (query, params, rows)
    return tuple(rows[0])


async def _pipeline(h: Harness, sql: SqlUnitOfWorkFactory, user: str) -> ParseTaskPipeline:
    async with sql() as uow:
        await uow.model_configs.put_default_embedding(
            EmbeddingConfig(user, "fake", "fake-model", DIMENSION)
        )
        await uow.commit()
    return ParseTaskPipeline(attrs.evolve(h.services, uow=sql))


async def _result_log_id(sql: SqlUnitOfWorkFactory, task: ParseTaskCommand) -> int:
    """The `document_parsed_log_id` the result message carries to the Java side."""
    async with sql() as uow:
        row = await uow.outbox.get(task.task_id)
    assert row is not None
    return row.result.document_parsed_log_id


def test_the_views_have_the_seeds_column_names(engine: Engine) -> None:
    found = inspect(engine)
    assert set(VIEWS) <= set(found.get_view_names())
    for view, columns in VIEWS.items():
        assert [c["name"] for c in found.get_columns(view)] == columns


async def test_a_markdown_upload_is_read_where_seed_002_says(
    tmp_path: Path, sql: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    """For md/markdown the parse output is the upload location, read from
    document_parsed_log.parsed_bucket_name / parsed_object_key, looked up by the result's
    document_parsed_log_id (never the request's md_object_key)."""
    h = Harness(tmp_path)
    user = str(uuid.uuid4().int % 10**9)
    pipeline = await _pipeline(h, sql, user)
    task = h.task("md", task_id=f"md-{uuid.uuid4()}", user_id=int(user))
    await pipeline.handle(task)
    log_id = await _result_log_id(sql, task)

    assert _one(
        engine,
        "SELECT parsed_bucket_name, parsed_object_key FROM document_parsed_log WHERE id = :id",
        id=log_id,
    ) == (SOURCE_BUCKET, task.source_object_key)
    assert task.source_object_key != task.md_object_key
    # docs/design/0005-wire-contract.md: the run's success and its Markdown, as the Java side asks
    assert _one(
        engine,
        "SELECT pipeline_status, failure_reason FROM document_parse_pipeline"
        " WHERE document_parsed_log_id = :id",
        id=log_id,
    ) == ("SUCCESS", None)
    assert _one(
        engine,
        "SELECT COUNT(*) FROM document_parsed_log"
        " WHERE task_id = :task_id AND parsed_object_key IS NOT NULL",
        task_id=task.task_id,
    ) == (1,)
    pipeline_id, log_of_pipeline, file_id, status = _one(
        engine,
        "SELECT p.id, p.document_parsed_log_id, l.original_file_id, l.file_type"
        " FROM document_parse_pipeline p JOIN document_parsed_log l"
        " ON l.document_parse_pipeline_id = p.id WHERE l.id = :id",
        id=log_id,
    )
    assert log_of_pipeline == log_id and (file_id, status) == ("100", "md")
    assert isinstance(pipeline_id, int)


async def test_a_failed_run_and_its_retry_are_traced_both_ways(
    tmp_path: Path, sql: SqlUnitOfWorkFactory, engine: Engine
) -> None:
    """pipeline_status is the one authority, failure_reason says why, and the retry
    chain is traced by document_parsed_log.retry_of_task_id and
    document_parse_pipeline.superseded_by_task_id."""
    h = Harness(tmp_path)
    user = str(uuid.uuid4().int % 10**9)
    pipeline = await _pipeline(h, sql, user)
    h.faults.arm("keywords.write", KeywordWriteFailed("bulk error"))
    first = h.task("txt", task_id=f"first-{uuid.uuid4()}", user_id=int(user))
    await pipeline.handle(first)
    h.faults.disarm()

    row = _one(
        engine,
        "SELECT pipeline_status, failure_reason, failed_stage, recover_from_stage,"
        " cleaning_status, chunking_status, vectorizing_status, pretokenize_status,"
        " es_indexing_status, sparse_vectorizing_status, superseded_by_task_id"
        " FROM document_parse_pipeline WHERE task_id = :task_id",
        task_id=first.task_id,
    )
    assert row[0] == "FAILED" and str(row[1]).startswith("KEYWORD_INDEXING_FAILED:")
    assert row[2:4] == ("KEYWORD_INDEXING", "KEYWORD_INDEXING")
    assert row[4:10] == ("SUCCESS",) * 4 + ("FAILED", "PENDING")
    assert row[10] is None
    # the Markdown was uploaded: a retry may resume after CLEANING
    assert _one(
        engine,
        "SELECT COUNT(*) FROM document_parsed_log"
        " WHERE task_id = :task_id AND parsed_object_key IS NOT NULL",
        task_id=first.task_id,
    ) == (1,)

    retry = h.retry_of(first, task_id=f"retry-{uuid.uuid4()}")
    await pipeline.handle(retry)
    async with sql() as uow:
        stored = await uow.runs.get(retry.task_id)
    assert stored is not None and stored.pipeline_status is PipelineStatus.SUCCESS

    assert _one(
        engine,
        "SELECT superseded_by_task_id FROM document_parse_pipeline WHERE task_id = :task_id",
        task_id=first.task_id,
    ) == (retry.task_id,)
    assert _one(
        engine,
        "SELECT task_id FROM document_parsed_log WHERE retry_of_task_id = :task_id",
        task_id=first.task_id,
    ) == (retry.task_id,)
    # the retry inherited CLEANING: its log names the same Markdown
    assert _one(
        engine,
        "SELECT parsed_bucket_name, parsed_object_key FROM document_parsed_log"
        " WHERE task_id = :task_id",
        task_id=retry.task_id,
    ) == _one(
        engine,
        "SELECT parsed_bucket_name, parsed_object_key FROM document_parsed_log"
        " WHERE task_id = :task_id",
        task_id=first.task_id,
    )
    assert _one(
        engine,
        "SELECT pipeline_status, retry_of_task_id, superseded_by_task_id"
        " FROM document_parse_pipeline WHERE document_parsed_log_id = :id",
        id=await _result_log_id(sql, retry),
    ) == ("SUCCESS", first.task_id, None)


def test_the_views_refuse_writes(engine: Engine) -> None:
    """Read-only: no row is added or removed through them on any backend; PostgreSQL and
    SQLite refuse an UPDATE too (MySQL/MariaDB let an UPDATE through a join view reach one
    table: grant the Java account SELECT only, docs/persistence.md)."""
    refused = [
        "INSERT INTO document_parsed_log (task_id) VALUES ('x')",
        "DELETE FROM document_parsed_log",
        "INSERT INTO document_parse_pipeline (task_id) VALUES ('x')",
        "DELETE FROM document_parse_pipeline",
    ]
    if engine.dialect.name != "mysql":
        refused += [
            "UPDATE document_parsed_log SET parsed_object_key = 'x'",
            "UPDATE document_parse_pipeline SET pipeline_status = 'SUCCESS'",
        ]
    for statement in refused:
        with engine.connect() as conn, pytest.raises(DBAPIError):
            conn.execute(text(statement))


def test_every_view_column_is_in_the_wire_contract() -> None:
    contract = (ROOT / "docs" / "wire-contracts.md").read_text(encoding="utf-8")
    section = contract.split("## Tables the business side reads", 1)[1].split("\n## ", 1)[0]
    for view, columns in VIEWS.items():
        assert f"`{view}`" in section
        for column in columns:
            assert f"`{column}`" in section, (view, column)
