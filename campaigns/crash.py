"""Crash campaign: `.venv/bin/python -m campaigns.crash --broker kafka|rabbitmq
[--tasks 200] [--kills 30] [--seed 1] [--concurrency 2] [--out FILE]`.

A business system's week in a few minutes. N parse tasks (the sample formats, plus tasks that
fail on purpose: corrupt files, missing sources, a user without a model config, invalid
fields, and re-sends of a document that supersede its run) go to the task topic; two
`ragline worker` processes (PostgreSQL, the local object store, the embedded vector index,
Elasticsearch API via noida-db, a constant embedder) consume them while they are SIGKILLed
`--kills` times on a seeded schedule: half at named points through the test hook
RAGLINE_TEST_CRASH_AT (inside every stage, and between the terminal commit and the publish),
half from outside at random moments. A killed worker is restarted. Like a business side, the
campaign publishes a retry task for every recoverable failure (at most `--retries` per
document). Then it asserts and prints:

- every task answered; none answered with two different statuses;
- nothing left PENDING or PROCESSING;
- each SUCCESS document's chunk rows, dense points, sparse points and keyword docs agree in
  count and ids;
- no index entries left for superseded or deleted runs: a SUCCESS document's entries all
  come from one SUCCESS run and the runs it retried (whose stages it inherited); a deleted
  document has none; a document with no SUCCESS run has entries only for its chunk rows.
  When that SUCCESS run is not the document's newest one (a retry of an old run finished
  after a newer upload of the same document) it is reported, not failed: see
  docs/reliability.md.
Exit status 1 when any check fails. The reduced size runs in tests/e2e/test_crash_campaign.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from cryptography.fernet import Fernet

from ragline.adapters.object_storage.local import LocalObjectStorage
from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    create_unit_of_work_factory,
    upgrade_to_head,
)
from ragline.application.health.check_health import obtain
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.bootstrap.factories import message_bus
from ragline.bootstrap.settings import Settings
from ragline.contracts.wire import ParseTask, decode_parse_result, encode_parse_task
from ragline.domain.parse_run import FailureCode, Stage
from ragline.testing.services import servers

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "examples" / "docs"
RESULTS = ROOT / "benchmarks" / "results"
ENTRY = "from ragline.bootstrap.cli import main; main()"
WORKER = (sys.executable, "-c", ENTRY, "--data-dir")
USER, NO_CONFIG_USER, DATASET = 41, 42, 5
BUCKET = "biz"
POINTS = ("after-commit", *(stage.value for stage in Stage))  # a short schedule hits it first
HOOK_PATIENCE_S = 30.0  # a hook not reached by then (no task got there): killed from outside
RESERVE_PER_KILL = 3  # first tasks held back per kill still to come, so hooks find work


# --- the plan -------------------------------------------------------------------------


@dataclass
class Chain:
    """One document's story as the business side sees it: the first task, then retries."""

    kind: str  # good, corrupt, missing, no-config, invalid, resend
    expect_success: bool
    tasks: list[ParseTask] = field(default_factory=list)


@dataclass(frozen=True)
class Kill:
    slot: int
    how: str  # hook or outside
    point: str | None = None
    nth: int = 1
    delay_ms: int = 0
    after_s: float = 0.0


def _samples() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if p.is_file())


def plan_chains(count: int, rng: random.Random) -> list[Chain]:
    """`count` first tasks: ~80 % good files of every format, the rest failing on purpose."""
    samples = _samples()
    kinds = ["good"] * 16 + ["corrupt", "missing", "no-config", "invalid"]
    chains: list[Chain] = []
    for n in range(count):
        kind = kinds[n % len(kinds)] if n >= len(samples) else "good"
        if kind == "good" and n >= 2 * len(samples) and n % 25 == 13:
            kind = "resend"  # the same document once more: the newer run supersedes
        sample = samples[n % len(samples)]
        file_type = sample.suffix.lstrip(".")
        doc = 10_000 + n
        key = f"raw/{sample.name}"
        user = USER
        if kind == "resend":
            earlier = rng.choice([c for c in chains if c.kind == "good"])
            first = earlier.tasks[0]
            doc, key, file_type = first.original_file_id, first.source_object_key, first.file_type
            sample = SAMPLES / first.source_filename
        elif kind == "corrupt":
            file_type = rng.choice(["pdf", "docx"])
            key = f"raw/corrupt-{n}.{file_type}"
        elif kind == "missing":
            key = f"raw/never-uploaded-{n}.{file_type}"
        elif kind == "no-config":
            user = NO_CONFIG_USER
        task = ParseTask(
            task_id=f"t{n:04d}-{uuid.uuid4().hex[:6]}",
            original_file_id=doc,
            document_parse_task_id=n + 1,
            user_id=user,
            dataset_id=DATASET if kind != "invalid" else 0,
            file_type=file_type,
            source_bucket=BUCKET,
            source_object_key=key,
            source_filename=sample.name if kind != "corrupt" else f"corrupt-{n}.{file_type}",
            md_bucket=BUCKET,
            md_object_key=f"parsed/{doc}-{n}.md",
            pdf_parser_backend="naive",
        )
        if kind == "invalid":  # a field the validator refuses; task_id still readable
            task = ParseTask.model_validate({**task.model_dump(mode="json"), "source_bucket": " "})
        chains.append(Chain(kind, kind in ("good", "resend"), [task]))
    return chains


def plan_kills(kills: int, rng: random.Random, slots: int = 2) -> list[Kill]:
    """Half at named points (every point covered as evenly as possible), half from outside
    at random moments; shuffled, each assigned to a worker slot."""
    hooked = kills - kills // 2
    points = [POINTS[i % len(POINTS)] for i in range(hooked)]
    schedule = [
        Kill(
            slot=0,
            how="hook",
            point=point,
            nth=rng.randint(1, 3),
            delay_ms=0 if point == "after-commit" or rng.random() < 0.3 else rng.randint(1, 400),
        )
        for point in points
    ]
    schedule += [
        Kill(slot=0, how="outside", after_s=round(rng.uniform(2.0, 12.0), 2))
        for _ in range(kills - hooked)
    ]
    rng.shuffle(schedule)
    return [
        Kill(k.slot + i % slots, k.how, k.point, k.nth, k.delay_ms, k.after_s)
        for i, k in enumerate(schedule)
    ]


# --- the workers ----------------------------------------------------------------------


@dataclass
class Slot:
    index: int
    pending: list[Kill]
    process: subprocess.Popen[bytes] | None = None
    current: Kill | None = None
    started: float = 0.0
    starts: int = 0


class Workers:
    """Two `ragline worker` processes, each restarted when it dies, each armed in turn with
    the next kill of its share of the schedule."""

    def __init__(self, env: dict[str, str], work: Path, kills: list[Kill], concurrency: int):
        self.env = env
        self.work = work
        self.concurrency = concurrency
        self.slots = [Slot(i, [k for k in kills if k.slot == i]) for i in range(2)]
        self.log: list[dict[str, Any]] = []
        self.t0 = time.monotonic()

    @property
    def kills_left(self) -> int:
        return sum(len(s.pending) + (s.current is not None) for s in self.slots)

    def _start(self, slot: Slot) -> None:
        kill = slot.pending.pop(0) if slot.pending else None
        env = dict(self.env)
        if kill is not None and kill.how == "hook":
            assert kill.point is not None
            env |= {
                "RAGLINE_TEST_CRASH_AT": kill.point,
                "RAGLINE_TEST_CRASH_NTH": str(kill.nth),
                "RAGLINE_TEST_CRASH_DELAY_MS": str(kill.delay_ms),
            }
        out = (self.work / f"worker-{slot.index}.log").open("ab")
        out.write(f"\n=== start {slot.starts} kill={kill}\n".encode())
        out.flush()
        slot.process = subprocess.Popen(
            [*WORKER, env["RAGLINE_DATA_DIR"], "worker", "--concurrency", str(self.concurrency)],
            env=env,
            cwd=self.work,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        slot.current, slot.started = kill, time.monotonic()
        slot.starts += 1

    def start(self) -> None:
        for slot in self.slots:
            self._start(slot)

    def tend(self, idle: bool) -> None:
        """Fire outside kills that are due, notice deaths, restart the dead. A hook no task
        can reach any more (`idle`: nothing left to answer) is fired from outside."""
        now = time.monotonic()
        for slot in self.slots:
            process, kill = slot.process, slot.current
            assert process is not None
            if process.poll() is None and kill is not None:
                due = kill.after_s if kill.how == "outside" else HOOK_PATIENCE_S * (not idle)
                if now - slot.started >= due:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    self._record(slot, "outside" if kill.how == "outside" else "hook-missed")
                    self._start(slot)
                continue
            if process.poll() is not None:
                how = "hook" if kill is not None and kill.how == "hook" else "unplanned"
                self._record(slot, how)
                self._start(slot)

    def _record(self, slot: Slot, how: str) -> None:
        assert slot.process is not None
        kill = slot.current
        self.log.append(
            {
                "slot": slot.index,
                "how": how,
                "point": kill.point if kill else None,
                "nth": kill.nth if kill else None,
                "delay_ms": kill.delay_ms if kill else None,
                "returncode": slot.process.returncode,
                "at_s": round(time.monotonic() - self.t0, 1),
            }
        )
        slot.current = None

    def stop(self) -> None:
        for slot in self.slots:
            if slot.process is not None and slot.process.poll() is None:
                os.killpg(slot.process.pid, signal.SIGTERM)
        for slot in self.slots:
            if slot.process is None:
                continue
            try:
                slot.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(slot.process.pid, signal.SIGKILL)
                slot.process.wait()


# --- the business side ----------------------------------------------------------------


def retry_of(previous: ParseTask, n: int) -> ParseTask:
    fields = previous.model_dump(mode="json")
    fields.update(
        task_id=f"{previous.task_id.split('~')[0]}~r{n}-{uuid.uuid4().hex[:4]}",
        is_retry=True,
        previous_task_id=previous.task_id,
        trigger_mode="manual_retry",
    )
    return ParseTask.model_validate(fields)


def recoverable(failure_reason: str | None) -> bool:
    code = (failure_reason or "").split(":", 1)[0]
    try:
        return FailureCode(code).recoverable
    except ValueError:
        return False


@dataclass
class Answers:
    """Every result message read off the result topic, by task_id."""

    by_task: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    messages: int = 0

    def add(self, body: bytes) -> None:
        result = decode_parse_result(body)
        self.messages += 1
        self.by_task[result.task_id].append(
            {"status": result.task_status, "failure_reason": result.failure_reason}
        )

    def latest(self, task_id: str) -> dict[str, Any] | None:
        got = self.by_task.get(task_id)
        return got[-1] if got else None


async def read_results(reader: Any, answers: Answers, stop: asyncio.Event) -> None:
    iterator = aiter(reader)
    while not stop.is_set():
        try:
            delivery = await asyncio.wait_for(anext(iterator), 1.0)
        except TimeoutError:
            continue
        except StopAsyncIteration:
            return
        answers.add(delivery.body)
        await delivery.ack()


# --- the checks -----------------------------------------------------------------------


def check_stores(database_url: str, data_dir: Path, es_url: str, es_index: str) -> dict[str, Any]:
    """Chunk rows, dense points, sparse points and keyword docs per document."""
    with psycopg.connect(database_url) as conn:
        runs = conn.execute(
            "SELECT task_id, user_id, dataset_id, original_file_id, pipeline_status, "
            "superseded_by_task_id, retry_of_task_id, id, document_deleted_at IS NOT NULL "
            "FROM parse_run"
        ).fetchall()
        chunks = conn.execute(
            "SELECT chunk_id, user_id, dataset_id, doc_id, task_id FROM chunk "
            "WHERE parent_id IS NOT NULL"
        ).fetchall()
    with contextlib.closing(sqlite3.connect(data_dir / "vectors" / "vectors.sqlite3")) as db:
        points = db.execute(
            "SELECT s.user_id, s.dataset_id, p.doc_id, p.chunk_id, p.dense IS NOT NULL, "
            "p.sparse IS NOT NULL FROM points p JOIN scopes s ON s.id = p.scope_id"
        ).fetchall()
    keyword_docs = _keyword_docs(es_url, es_index)

    Doc = tuple[str, str, str]
    chunk_ids: dict[Doc, set[str]] = defaultdict(set)
    chunk_tasks: dict[Doc, set[str]] = defaultdict(set)
    for chunk_id, user, dataset, doc, task in chunks:
        chunk_ids[(user, dataset, doc)].add(chunk_id)
        chunk_tasks[(user, dataset, doc)].add(task)
    dense: dict[Doc, set[str]] = defaultdict(set)
    sparse: dict[Doc, set[str]] = defaultdict(set)
    for user, dataset, doc, chunk_id, has_dense, has_sparse in points:
        if has_dense:
            dense[(user, dataset, doc)].add(chunk_id)
        if has_sparse:
            sparse[(user, dataset, doc)].add(chunk_id)
    keywords: dict[Doc, set[str]] = defaultdict(set)
    keyword_tasks: dict[Doc, set[str]] = defaultdict(set)
    for source in keyword_docs:
        scope = (source["user_id"], source["dataset_id"], source["doc_id"])
        keywords[scope].add(source["chunk_id"])
        keyword_tasks[scope].add((source.get("payload") or {}).get("task_id", "?"))

    by_task = {r[0]: r for r in runs}

    def family(task_id: str) -> set[str]:
        """The run and the runs it retried, whose SUCCESS stages it may have inherited."""
        seen: set[str] = set()
        while task_id and task_id not in seen and task_id in by_task:
            seen.add(task_id)
            task_id = by_task[task_id][6]
        return seen

    successes: dict[Doc, list[str]] = defaultdict(list)  # per document, oldest first
    deleted = {(r[1], r[2], r[3]) for r in runs if r[8]}
    for task_id, user, dataset, doc, status, *_ in sorted(runs, key=lambda r: r[7]):
        if status == "SUCCESS" and (user, dataset, doc) not in deleted:
            successes[(user, dataset, doc)].append(task_id)
    current = {scope: tasks[-1] for scope, tasks in successes.items()}
    problems: list[str] = []
    left_over: list[str] = []
    older_run_wins: list[str] = []
    agreeing = 0
    for scope, tasks in successes.items():
        ids = chunk_ids.get(scope, set())
        views = {"dense": dense[scope], "sparse": sparse[scope], "keyword": keywords[scope]}
        bad = {name: len(v) for name, v in views.items() if v != ids}
        writers = chunk_tasks[scope] | keyword_tasks[scope]
        # the entries must come from one SUCCESS run's lineage (it and the runs it retried)
        winner = next((t for t in reversed(tasks) if writers <= family(t)), None)
        if not ids or bad:
            problems.append(f"{scope} ({tasks[-1]}): {len(ids)} chunks, disagreeing {bad}")
        elif winner is None:
            left_over.append(f"{scope}: SUCCESS runs {tasks}, entries of {sorted(writers)}")
        else:
            agreeing += 1
            if winner != tasks[-1]:
                older_run_wins.append(f"{scope}: newest SUCCESS {tasks[-1]}, index of {winner}")
    orphans = []  # documents without a SUCCESS run: index entries only for their chunk rows
    for scope in deleted:
        remaining = {
            "chunks": len(chunk_ids.get(scope, ())),
            "dense": len(dense.get(scope, ())),
            "sparse": len(sparse.get(scope, ())),
            "keyword": len(keywords.get(scope, ())),
        }
        if any(remaining.values()):
            left_over.append(f"{scope}: deleted, still {remaining}")
    for scope in (set(dense) | set(sparse) | set(keywords)) - set(current) - deleted:
        extra = (dense[scope] | sparse[scope] | keywords[scope]) - chunk_ids.get(scope, set())
        if extra:
            orphans.append(f"{scope}: {len(extra)} index entries without a chunk row")
    superseded = {r[0] for r in runs if r[5] is not None}
    return {
        "runs": len(runs),
        "runs_by_status": dict(Counter(r[4] for r in runs)),
        "success_documents": len(current),
        "documents_in_agreement": agreeing,
        "chunk_rows": len(chunks),
        "dense_points": sum(map(len, dense.values())),
        "sparse_points": sum(map(len, sparse.values())),
        "keyword_docs": len(keyword_docs),
        "store_disagreements": problems,
        "superseded_runs": len(superseded),
        "deleted_documents": len(deleted),
        "superseded_left_overs": left_over,
        "orphan_index_entries": orphans,
        "index_of_an_older_success_run": older_run_wins,
        "unfinished_runs": [r[0] for r in runs if r[4] in ("PENDING", "PROCESSING")],
    }


def _keyword_docs(es_url: str, index: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=es_url, timeout=60) as es:
        if es.head(f"/{index}").status_code == 404:
            return []
        es.post(f"/{index}/_refresh")
        docs: list[dict[str, Any]] = []
        while True:
            page = es.post(
                f"/{index}/_search",
                json={
                    "size": 2000,
                    "from": len(docs),
                    "query": {"match_all": {}},
                    "sort": [{"chunk_id": "asc"}],
                    "_source": ["chunk_id", "doc_id", "user_id", "dataset_id", "payload"],
                },
            ).json()
            hits = page["hits"]["hits"]
            docs += [hit["_source"] for hit in hits]
            if len(hits) < 2000:
                return docs


def check_answers(chains: list[Chain], answers: Answers) -> dict[str, Any]:
    published = [task.task_id for chain in chains for task in chain.tasks]
    unanswered = [t for t in published if not answers.by_task.get(t)]
    two_statuses = {
        t: sorted({a["status"] for a in got})
        for t, got in answers.by_task.items()
        if len({a["status"] for a in got}) > 1
    }
    finals: Counter[str] = Counter()
    wrong_end = []
    for chain in chains:
        last = answers.latest(chain.tasks[-1].task_id)
        final = "unanswered" if last is None else last["status"]
        finals[f"{chain.kind}:{final}"] += 1
        if chain.expect_success and final != "success":
            wrong_end.append((chain.tasks[-1].task_id, last))
    codes: Counter[str] = Counter()
    for got in answers.by_task.values():
        for answer in got:
            codes[(answer["failure_reason"] or "SUCCESS").split(":", 1)[0]] += 1
    return {
        "tasks_published": len(published),
        "retries_published": sum(len(c.tasks) - 1 for c in chains),
        "result_messages": answers.messages,
        "unanswered": unanswered,
        "two_different_statuses": two_statuses,
        "final_by_kind": dict(sorted(finals.items())),
        "good_documents_not_ending_success": wrong_end[:20],
        "answers_by_code": dict(sorted(codes.items())),
    }


# --- the campaign ---------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    broker: str
    work: Path
    database_url: str
    es_url: str
    embeddings_url: str
    kafka_bootstrap: str | None = None


async def _provision(setup: Setup, env: dict[str, str], chains: list[Chain], seed: int) -> None:
    await asyncio.to_thread(upgrade_to_head, setup.database_url)
    cipher = ApiKeyCipher(env["RAGLINE_SECRET_KEY"])
    factory = create_unit_of_work_factory(setup.database_url, cipher=cipher)
    async with factory() as uow:
        config = EmbeddingConfig(
            str(USER), "openai", "constant", servers.DIMENSION, setup.embeddings_url, "k"
        )
        await uow.model_configs.put_default_embedding(config)
        await uow.commit()
    await factory.dispose()
    storage = LocalObjectStorage(Path(env["RAGLINE_DATA_DIR"]) / "objects")
    await storage.ensure_bucket(BUCKET)
    for sample in _samples():
        await storage.put_file(BUCKET, f"raw/{sample.name}", sample)
    junk = random.Random(seed)
    for chain in chains:
        task = chain.tasks[0]
        if chain.kind == "corrupt":
            path = setup.work / Path(task.source_object_key).name
            path.write_bytes(junk.randbytes(4096))
            await storage.put_file(BUCKET, task.source_object_key, path)


def _env(setup: Setup) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:8]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLINE_")}
    env |= {
        "RAGLINE_DATA_DIR": str(setup.work / "data"),
        "RAGLINE_DATABASE_URL": setup.database_url,
        "RAGLINE_SECRET_KEY": Fernet.generate_key().decode(),
        "MQ_VENDOR": setup.broker,
        "RAGLINE_RABBITMQ_URL": servers.RABBITMQ_URL,
        "PARSE_TASK_TOPIC": f"crash-tasks-{suffix}",
        "PARSE_RESULT_TOPIC": f"crash-results-{suffix}",
        "RAGLINE_KAFKA_GROUP_ID": f"crash-workers-{suffix}",
        "RAGLINE_KEYWORD_INDEX": "elasticsearch",
        "RAGLINE_ELASTICSEARCH_URL": setup.es_url,
        "RAGLINE_ELASTICSEARCH_INDEX": f"crash-{suffix}",
        "RAGLINE_LOG_FORMAT": "json",
        "OMP_WAIT_POLICY": "PASSIVE",
        "PYTHONUNBUFFERED": "1",
    }
    if setup.kafka_bootstrap:
        env["RAGLINE_KAFKA_BOOTSTRAP_SERVERS"] = setup.kafka_bootstrap
    return env


def _bus(env: dict[str, str]) -> Any:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=Path(env["RAGLINE_DATA_DIR"]),
        mq_vendor=env["MQ_VENDOR"],
        parse_task_topic=env["PARSE_TASK_TOPIC"],
        parse_result_topic=env["PARSE_RESULT_TOPIC"],
        kafka_bootstrap_servers=env.get("RAGLINE_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        kafka_group_id=env["RAGLINE_KAFKA_GROUP_ID"],
        rabbitmq_url=env["RAGLINE_RABBITMQ_URL"],
    )
    return message_bus(settings)


async def campaign(
    setup: Setup,
    *,
    tasks: int,
    kills: int,
    seed: int = 1,
    concurrency: int = 2,
    retries: int = 3,
    timeout_s: float = 1800.0,
) -> dict[str, Any]:
    rng = random.Random(seed)
    chains = plan_chains(tasks, rng)
    schedule = plan_kills(kills, rng)
    env = _env(setup)
    await _provision(setup, env, chains, seed)
    bus = _bus(env)
    reader = bus.result_reader()
    if hasattr(reader, "declare"):  # RabbitMQ: queues exist before anything is sent
        await reader.declare()
        deploy = bus.task_source()
        await deploy.declare()
        await deploy.close()
    answers, stop_reading = Answers(), asyncio.Event()
    reading = asyncio.create_task(read_results(reader, answers, stop_reading))
    publisher = bus.task_publisher()
    workers = Workers(env, setup.work, schedule, concurrency)
    started = time.monotonic()
    try:
        backlog = list(chains)
        window = 2 * 2 * concurrency  # tasks in flight while kills remain: work for the hooks
        workers.start()
        while time.monotonic() - started < timeout_s:
            open_tasks = sum(
                answers.latest(c.tasks[-1].task_id) is None
                for c in chains[: len(chains) - len(backlog)]
            )
            while backlog and (
                workers.kills_left == 0
                or open_tasks < 2  # a trickle always
                or (open_tasks < window and len(backlog) > RESERVE_PER_KILL * workers.kills_left)
            ):
                chain = backlog.pop(0)
                await publisher.publish(encode_parse_task(chain.tasks[0]), chain.tasks[0].file_type)
                open_tasks += 1
            await asyncio.to_thread(workers.tend, open_tasks == 0 and not backlog)
            settled = not backlog
            for chain in chains[: len(chains) - len(backlog)]:
                last = chain.tasks[-1]
                answer = answers.latest(last.task_id)
                if answer is None:
                    settled = False
                    continue
                failed = answer["status"] == "failed"
                if failed and recoverable(answer["failure_reason"]) and len(chain.tasks) <= retries:
                    retry = retry_of(last, len(chain.tasks))
                    chain.tasks.append(retry)
                    await publisher.publish(encode_parse_task(retry), retry.file_type)
                    settled = False
            if settled and workers.kills_left == 0:
                break
            await asyncio.sleep(0.25)
        deletions = await delete_some(env, chains, answers)
        await asyncio.sleep(3)  # late duplicates (a resent result) still count
    finally:
        workers.stop()
        stop_reading.set()
        await reading
        await reader.close()
        await publisher.close()
    elapsed = time.monotonic() - started
    report: dict[str, Any] = {
        "broker": setup.broker,
        "seed": seed,
        "tasks": tasks,
        "concurrency": concurrency,
        "workers": 2,
        "elapsed_s": round(elapsed, 1),
        "kills": {
            "planned": kills,
            "done": sum(k["how"] != "unplanned" for k in workers.log),
            "by_how": dict(Counter(k["how"] for k in workers.log)),
            "hook_points_hit": dict(Counter(k["point"] for k in workers.log if k["how"] == "hook")),
            "log": workers.log,
        },
        "answers": check_answers(chains, answers),
        "deletions": deletions,
        "stores": await asyncio.to_thread(
            check_stores,
            setup.database_url,
            Path(env["RAGLINE_DATA_DIR"]),
            setup.es_url,
            env["RAGLINE_ELASTICSEARCH_INDEX"],
        ),
    }
    report["verdict"] = verdict(report)
    return report


async def delete_some(env: dict[str, str], chains: list[Chain], answers: Answers) -> int:
    """Delete every tenth document that ended SUCCESS, as the business side's DELETE would,
    while the workers still run (deletion must leave no index entry behind)."""
    done = [
        c.tasks[0]
        for c in chains
        if c.kind == "good"
        and (answers.latest(c.tasks[-1].task_id) or {}).get("status") == "success"
    ][::10]
    container = container_for(
        Path(env["RAGLINE_DATA_DIR"]),
        database_url=env["RAGLINE_DATABASE_URL"],
        secret_key=env["RAGLINE_SECRET_KEY"],
        keyword_index="elasticsearch",
        elasticsearch_url=env["RAGLINE_ELASTICSEARCH_URL"],
        elasticsearch_index=env["RAGLINE_ELASTICSEARCH_INDEX"],
    )
    try:
        delete = await obtain(container.delete_document)
        for task in done:
            await delete(str(task.user_id), str(task.dataset_id), str(task.original_file_id))
    finally:
        await shut_down(container)
    return len(done)


def verdict(report: dict[str, Any]) -> dict[str, bool]:
    answers, stores = report["answers"], report["stores"]
    return {
        "every_task_answered": not answers["unanswered"],
        "no_two_different_statuses": not answers["two_different_statuses"],
        "nothing_left_processing": not stores["unfinished_runs"],
        "stores_agree": not stores["store_disagreements"],
        "no_superseded_left_overs": not stores["superseded_left_overs"],
        "no_orphan_index_entries": not stores["orphan_index_entries"],
        "good_documents_end_success": not answers["good_documents_not_ending_success"],
        "all_planned_kills_done": report["kills"]["done"] >= report["kills"]["planned"],
    }


@contextlib.contextmanager
def environment(broker: str, work: Path) -> Iterator[Setup]:
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(servers.postgres_database("crash"))
        es_url = stack.enter_context(servers.elasticsearch(work))
        embeddings_url = stack.enter_context(servers.constant_embeddings())
        bootstrap = stack.enter_context(servers.kafka_broker(work)) if broker == "kafka" else None
        yield Setup(broker, work, database_url, es_url, embeddings_url, bootstrap)


def print_report(report: dict[str, Any]) -> None:
    answers, stores, kills = report["answers"], report["stores"], report["kills"]
    print(
        f"crash campaign on {report['broker']}: {report['tasks']} tasks, 2 workers x "
        f"concurrency {report['concurrency']}, {report['elapsed_s']} s"
    )
    print(
        f"  kills: {kills['done']} of {kills['planned']} planned {kills['by_how']}; "
        f"hook points hit {kills['hook_points_hit']}"
    )
    print(
        f"  tasks published {answers['tasks_published']} "
        f"(retries {answers['retries_published']}), result messages "
        f"{answers['result_messages']}, unanswered {len(answers['unanswered'])}, "
        f"two statuses {len(answers['two_different_statuses'])}"
    )
    print(f"  final by kind: {answers['final_by_kind']}")
    print(
        f"  runs {stores['runs_by_status']}; left PENDING/PROCESSING "
        f"{len(stores['unfinished_runs'])}"
    )
    print(
        f"  SUCCESS documents {stores['success_documents']}, in agreement "
        f"{stores['documents_in_agreement']} (chunks {stores['chunk_rows']}, dense "
        f"{stores['dense_points']}, sparse {stores['sparse_points']}, keyword "
        f"{stores['keyword_docs']}); superseded runs {stores['superseded_runs']}, "
        f"deleted documents {stores['deleted_documents']}, "
        f"left-overs {len(stores['superseded_left_overs'])}; index of an older SUCCESS run "
        f"than the newest {len(stores['index_of_an_older_success_run'])}"
    )
    for name, ok in report["verdict"].items():
        print(f"  {'PASS' if ok else 'FAIL'} {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", choices=["kafka", "rabbitmq"], required=True)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None, help="keep logs here")
    parser.add_argument("--out", type=Path, default=None, help="JSON report file")
    args = parser.parse_args()
    import tempfile

    work = args.work or Path(tempfile.mkdtemp(prefix=f"crash-{args.broker}-"))
    work.mkdir(parents=True, exist_ok=True)
    with environment(args.broker, work) as setup:
        report = asyncio.run(
            campaign(
                setup,
                tasks=args.tasks,
                kills=args.kills,
                seed=args.seed,
                concurrency=args.concurrency,
                retries=args.retries,
            )
        )
    out = args.out or RESULTS / f"crash-{args.broker}.json"
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print_report(report)
    print(f"  report: {out}; logs: {work}")
    sys.exit(0 if all(report["verdict"].values()) else 1)


if __name__ == "__main__":
    main()
