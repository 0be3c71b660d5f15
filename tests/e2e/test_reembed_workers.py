"""Two `ragline worker` processes over PostgreSQL and RabbitMQ share one re-embedding in their
background loops; one is SIGKILLed while it holds a copy batch, the batch's lease runs out and
the other copies it; the re-embedding swaps, and tenant B's points are untouched.

The chunks are seeded straight into the store (tests/e2e/reembedding_seed.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet

from ragline.adapters.persistence.sql import upgrade_to_head
from ragline.application.ports.vector_index import VectorSpace
from ragline.testing.services.ragline_cli import ENTRY
from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database
from tests.e2e.ragline_process import TIMEOUT_SECONDS, kill_group
from tests.e2e.reembedding_seed import owned_by, points, seed

ID = "reembed-workers-1"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    name = create_postgres_database()
    suffix = uuid.uuid4().hex[:8]
    try:
        yield {
            "RAGLINE_DATA_DIR": str(tmp_path / "data"),
            "RAGLINE_DATABASE_URL": f"postgresql://postgres@127.0.0.1:5432/{name}",
            "RAGLINE_SECRET_KEY": Fernet.generate_key().decode(),  # a shared database's
            "MQ_VENDOR": "rabbitmq",
            "RAGLINE_RABBITMQ_URL": "amqp://guest:guest@127.0.0.1:5672/%2f",
            "PARSE_TASK_TOPIC": f"e2e-reembed-tasks-{suffix}",
            "PARSE_RESULT_TOPIC": f"e2e-reembed-results-{suffix}",
            "RAGLINE_REEMBED_BATCH_SIZE": "4",
            "RAGLINE_REEMBED_LEASE_SECONDS": "3",
            "RAGLINE_REEMBED_POLL_SECONDS": "0.2",
            "OMP_WAIT_POLICY": "PASSIVE",
        }
    finally:
        drop_postgres_database(name)


def batches(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT seq, status, owner, claims FROM reembedding_batch "
            "WHERE reembedding_id = %s ORDER BY seq",
            (ID,),
        ).fetchall()
    return [{"seq": s, "status": st, "owner": o, "claims": c} for s, st, o, c in rows]


def status(url: str) -> tuple[str, int, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT status, done, total FROM reembedding WHERE id = %s", (ID,)
        ).fetchone()
    assert row is not None
    return row[0], row[1], row[2]


def worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", ENTRY, "worker"],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def test_two_workers_share_a_reembedding_and_survive_a_kill(
    env: dict[str, str], tmp_path: Path
) -> None:
    data_dir, url = Path(env["RAGLINE_DATA_DIR"]), env["RAGLINE_DATABASE_URL"]
    upgrade_to_head(url)
    key = env["RAGLINE_SECRET_KEY"]
    ids = asyncio.run(seed(data_dir, ID, database_url=url, secret_key=key))
    doomed = worker(env, tmp_path / "doomed.log")
    survivor = worker(env, tmp_path / "survivor.log")
    try:
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while True:  # the doomed worker has copied a batch and holds another
            assert doomed.poll() is None and survivor.poll() is None, "a worker ended"
            assert time.monotonic() < deadline, f"never caught mid-batch: {batches(url)}"
            mine = [r for r in batches(url) if owned_by(r, doomed.pid)]
            if {"done", "copying"} <= {r["status"] for r in mine}:
                kill_group(doomed, signal.SIGKILL)
                break
            time.sleep(0.01)
        doomed.wait(30)
        held = [
            r["seq"] for r in batches(url) if owned_by(r, doomed.pid) and r["status"] == "copying"
        ]
        assert held, "the killed worker held no batch"
        while status(url)[0] != "SWAPPED":
            assert survivor.poll() is None, (tmp_path / "survivor.log").read_text()
            assert time.monotonic() < deadline, f"no swap: {status(url)} {batches(url)}"
            time.sleep(0.2)
    finally:
        for process in (doomed, survivor):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(60)
    assert survivor.returncode == 0, (tmp_path / "survivor.log").read_text()[-4000:]
    assert status(url) == ("SWAPPED", len(ids["A"]), len(ids["A"]))
    rows = {r["seq"]: r for r in batches(url)}
    assert {r["status"] for r in rows.values()} == {"done"}
    for seq in held:
        assert owned_by(rows[seq], survivor.pid) and rows[seq]["claims"] == 2, rows[seq]
    assert {r["owner"].split("/")[1] for r in rows.values()} == {
        str(doomed.pid),
        str(survivor.pid),
    }
    assert asyncio.run(points(data_dir, VectorSpace(1, 384), "A")) == set(ids["A"])
    assert asyncio.run(points(data_dir, VectorSpace(0, 384), "B")) == set(ids["B"])
    assert "Traceback" not in (tmp_path / "survivor.log").read_text(errors="replace")
