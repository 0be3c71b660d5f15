"""The fault campaign: object storage, database, vector index, keyword index and broker, each
made unavailable when a given stage starts, with the real adapters of a deployment.

Per cell (stage x dependency) one document goes through the real consumer and pipeline of
the container (PostgreSQL, S3 on moto, Elasticsearch API on noida-db, RabbitMQ, the embedded
vector index), each network dependency behind a `TcpGate`. When the cell's stage begins (its
`ragline.stage` span opens) the dependency goes away: the gate is cut (closed port), or, for
the embedded vector index, another connection holds its SQLite file's write lock past the
index's busy timeout. The dependency stays away until the run has ended, then comes back.
Checked per cell:

- the run ends FAILED with the expected code at the first stage (from the cut on) that
  needs the dependency, `recover_from_stage` = that stage, every earlier stage SUCCESS; or
  ends SUCCESS when no later stage needs it. A database outage leaves the run PROCESSING
  and the delivery unsettled (the consumer holds the backlog, nothing is dead-lettered); its
  redelivery once the database is back ends it INTERRUPTED_TASK at the stage in flight;
- nothing else was touched: a control document indexed before stays the same in every
  store (chunk rows, dense, sparse and keyword hits);
- a broker outage loses no result: the run ends SUCCESS, its result stays PENDING while the
  broker is away and is SENT once it is back;
- after the fault clears, a retry ends SUCCESS, inheriting every stage before
  `recover_from_stage` (redone: only what was not SUCCESS), and the document's chunk rows,
  dense points, sparse points and keyword docs agree in count.

The only stand-in is the embedder (a constant vector: the campaign is not about the model).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pika
import psycopg
from dependency_injector import providers

from campaigns.faults.backlog import BacklogResult, backlog_cell
from campaigns.faults.gate import GateLoop, TcpGate
from ragline.adapters.inbound.task_consumer import TaskConsumer
from ragline.adapters.persistence.sql import ApiKeyCipher, upgrade_to_head
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.application.health import obtain
from ragline.application.ports.dependencies import DependencyUnavailable
from ragline.application.ports.parser import PdfParserBackend
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.tasks import ParseTaskCommand
from ragline.bootstrap.container import Container, container_for
from ragline.domain.parse_run import FailureCode, ParseRun, PipelineStatus, Stage
from ragline.testing.services.constant_embedder import DIMENSION, ConstantResolver

log = logging.getLogger("ragline.campaigns.faults")

STAGES = tuple(Stage)
DEPENDENCIES = ("storage", "database", "vectors", "keywords", "broker")
USER = 7
CONTROL_DATASET = 1
SOURCE_BUCKET, MD_BUCKET = "biz-sources", "biz-markdown"
VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", Path(__file__).resolve().parents[2] / ".venv"))
VENV_BIN = VENV_BIN / "bin" if (VENV_BIN / "bin").is_dir() else VENV_BIN
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
RABBIT = ("127.0.0.1", 5672)
TEXT = "\n\n".join(
    f"Paragraph {n} of the campaign document: alpha beta gamma, topic {n}, words {n * 7}."
    for n in range(12)
)

# Which stages need which dependency (besides the database, which every stage writes).
NEEDS: Mapping[str, tuple[Stage, ...]] = {
    "storage": (Stage.CLEANING,),  # source download, Markdown upload
    "vectors": (Stage.VECTORIZING, Stage.SPARSE_VECTORIZING),
    "keywords": (Stage.KEYWORD_INDEXING,),
    "database": STAGES,
    "broker": (),  # results only: the outbox keeps them owed
}
# The code a run must fail with when `dependency` is gone at `stage`.
CODES: Mapping[tuple[str, Stage], frozenset[FailureCode]] = {
    # a storage outage while downloading the source: the stage's generic code (recoverable)
    ("storage", Stage.CLEANING): frozenset({FailureCode.PARSE_ENGINE_FAILED}),
    ("vectors", Stage.VECTORIZING): frozenset({FailureCode.VECTORIZING_FAILED}),
    ("vectors", Stage.SPARSE_VECTORIZING): frozenset({FailureCode.SPARSE_VECTORIZING_FAILED}),
    # the stage writes first (no delete before it since the chunk lineage)
    ("keywords", Stage.KEYWORD_INDEXING): frozenset(
        {FailureCode.KEYWORD_INDEXING_FAILED, FailureCode.KEYWORD_INDEX_UNAVAILABLE}
    ),
    **{("database", stage): frozenset({FailureCode.INTERRUPTED_TASK}) for stage in STAGES},
}


def expected_stage(dependency: str, cut_at: Stage) -> Stage | None:
    """The stage that fails: the first one from `cut_at` on that needs the dependency."""
    for stage in STAGES[STAGES.index(cut_at) :]:
        if stage in NEEDS[dependency]:
            return stage
    return None


@dataclass
class CellResult:
    dependency: str
    stage: str
    status: str = ""
    failed_stage: str | None = None
    recover_from_stage: str | None = None
    code: str | None = None
    result_while_down: str | None = None  # broker: the outbox row during the outage
    result_after: str | None = None
    retry_status: str | None = None
    inherited: list[str] = field(default_factory=list)
    redone: list[str] = field(default_factory=list)
    counts_after_retry: dict[str, int] = field(default_factory=dict)
    control_untouched: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def outcome(self) -> str:
        """The table cell: what the run did."""
        if self.dependency == "broker":
            return f"SUCCESS, result {self.result_while_down} → {self.result_after}"
        if self.status == PipelineStatus.SUCCESS.value:
            return "SUCCESS (not needed)"
        return f"{self.code} @ {self.failed_stage}"


class Delivery:
    """A task delivery as a broker hands it to the consumer (this campaign is not about
    the broker's consuming side)."""

    def __init__(self, body: bytes, routing_key: str) -> None:
        self._body = body
        self._routing_key = routing_key
        self.settled: str | None = None

    @property
    def body(self) -> bytes:
        return self._body

    @property
    def routing_key(self) -> str | None:
        return self._routing_key

    @property
    def headers(self) -> Mapping[str, str]:
        return {}

    @property
    def topic(self) -> str:
        return "campaign-tasks"

    async def ack(self) -> None:
        self.settled = "ack"

    async def dead_letter(self, reason: str) -> None:
        self.settled = f"dead-letter: {reason}"


class StageTrigger:
    """The Tracing port, used to learn when a stage begins: on entering the cell's stage
    span of the cell's task, the fault starts. Spans themselves are not recorded."""

    def __init__(self) -> None:
        self.armed: tuple[str, str, Any] | None = None  # (task_id, stage, start fault)

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, str | int]) -> Iterator[None]:
        armed = self.armed
        if (
            armed is not None
            and name == "ragline.stage"
            and attributes.get("ragline.task_id") == armed[0]
            and attributes.get("ragline.stage") == armed[1]
        ):
            self.armed = None
            armed[2]()
        yield


class VectorLock:
    """The embedded vector index made unavailable: another connection holds the write lock
    of its SQLite file (as a stuck process would), longer than the index waits."""

    def __init__(self, directory: Path) -> None:
        self._file = directory / "vectors.sqlite3"
        self._holder: sqlite3.Connection | None = None

    def cut(self) -> None:
        holder = sqlite3.connect(self._file, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        self._holder = holder

    def restore(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()


class Servers:
    """moto (S3) and noida-db (Elasticsearch API) started here; PostgreSQL and RabbitMQ are
    the machine's. Every network dependency gets a gate."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gates = GateLoop()
        self._processes: list[subprocess.Popen[bytes]] = []
        self.database = f"ragline_faults_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE \"{self.database}\" ENCODING 'UTF8' TEMPLATE template0")
        upgrade_to_head(f"postgresql://postgres@127.0.0.1:5432/{self.database}")
        s3_port = self._start("moto", [str(VENV_BIN / "moto_server"), "-H", "127.0.0.1", "-p"])
        es_dir = root / "noida"
        es_port = self._start(
            "noida",
            [
                str(VENV_BIN / "noida-db"),
                "start",
                "--data-dir",
                str(es_dir),
                "--host",
                "127.0.0.1",
                "--only",
                "elasticsearch",
                "--elasticsearch-port",
            ],
        )
        self.gate = {
            "database": TcpGate(self.gates, "127.0.0.1", 5432).start(),
            "storage": TcpGate(self.gates, "127.0.0.1", s3_port).start(),
            "keywords": TcpGate(self.gates, "127.0.0.1", es_port).start(),
            "broker": TcpGate(self.gates, *RABBIT).start(),
        }

    def _start(self, name: str, command: list[str]) -> int:
        port = _free_port()
        out = (self.root / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [*command, str(port)], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        self._processes.append(process)
        _wait_for_port(port, process)
        return port

    def close(self) -> None:
        for gate in self.gate.values():
            with contextlib.suppress(Exception):
                gate.close()
        self.gates.stop()
        for process in self._processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 15)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


class FaultCampaign:
    def __init__(self, servers: Servers, data_dir: Path) -> None:
        self.servers = servers
        suffix = uuid.uuid4().hex[:8]
        gate = servers.gate
        self.result_topic = f"faults-results-{suffix}"
        self.options: dict[str, Any] = {
            "database_url": f"postgresql://postgres@{gate['database'].address}/{servers.database}",
            "secret_key": ApiKeyCipher.generate_key().decode(),
            "object_store": "s3",
            "s3_endpoint_url": f"http://{gate['storage'].address}",
            "s3_access_key": "campaign",
            "s3_secret_key": "campaign",
            "keyword_index": "elasticsearch",
            "elasticsearch_url": f"http://{gate['keywords'].address}",
            "elasticsearch_index": f"faults-{suffix}",
            "vector_index": "embedded",
            "mq_vendor": "rabbitmq",
            "rabbitmq_url": f"amqp://guest:guest@{gate['broker'].address}/%2F",
            "parse_task_topic": f"faults-tasks-{suffix}",
            "parse_result_topic": self.result_topic,
        }
        self.data_dir = data_dir
        # the stage cells end a run the database outage left unfinished by the sweep, soon
        self.container: Container = container_for(
            data_dir, **self.options, run_heartbeat_seconds=0.1, stale_run_seconds=0.5
        )
        self.trigger = StageTrigger()
        self.vectors_dir = data_dir / "vectors"
        self.container.tracing.override(providers.Object(self.trigger))
        self.container.embedders.override(providers.Object(ConstantResolver()))
        self.container.vectors.override(
            providers.Resource(_embedded_index, self.vectors_dir)  # a short busy timeout
        )
        self.vector_lock = VectorLock(self.vectors_dir)
        self._documents = 0
        self.control: dict[str, int] = {}

    # -- set-up -------------------------------------------------------------------------

    async def open(self) -> None:
        c = self.container
        self.uow = await obtain(c.uow_factory)
        self.storage = await obtain(c.storage)
        self.vectors = await obtain(c.vectors)
        self.keywords = await obtain(c.keywords)
        self.pipeline = await obtain(c.pipeline)
        self.relay = await obtain(c.relay)
        self.consumer = TaskConsumer(self.pipeline, await obtain(c.wire_format))
        self.wire = await obtain(c.wire_format)
        self.sparse = await obtain(c.sparse)
        self.tokenizer = await obtain(c.tokenizer)
        for bucket in (SOURCE_BUCKET, MD_BUCKET):
            await self.storage.ensure_bucket(bucket)
        async with self.uow() as uow:
            config = EmbeddingConfig(str(USER), "constant", "constant-384", DIMENSION)
            await uow.model_configs.put_default_embedding(config)
            await uow.commit()
        _bind_result_queue(self.result_topic)  # the business side listens for results
        control = await self.new_task(CONTROL_DATASET)
        await self.consumer.process(self.delivery(control))
        run = await self.run_of(control.task_id)
        if run is None or run.pipeline_status is not PipelineStatus.SUCCESS:
            raise RuntimeError(f"the control document did not index: {run}")
        await self.drain_results()
        self.control = await self.counts(control)

    async def close(self) -> None:
        self.vector_lock.restore()
        closing = self.container.shutdown_resources()
        if closing is not None:
            await closing

    # -- one cell -------------------------------------------------------------------------

    def worker_container(self) -> Container:
        """The container of a `ragline worker` on the same servers, with the default
        heartbeat and stale-run settings (the backlog cells run a real worker)."""
        container = container_for(self.data_dir, **self.options)
        container.embedders.override(providers.Object(ConstantResolver()))
        container.vectors.override(providers.Resource(_embedded_index, self.vectors_dir))
        return container

    def next_dataset(self) -> int:
        """A dataset of its own for the next document (a scope search finds only it)."""
        return CONTROL_DATASET + 1 + self._documents

    def fault(self, dependency: str) -> TcpGate | VectorLock:
        return self.vector_lock if dependency == "vectors" else self.servers.gate[dependency]

    async def cell(self, dependency: str, stage: Stage) -> CellResult:
        result = CellResult(dependency, stage.value)
        task = await self.new_task(self.next_dataset())
        fault = self.fault(dependency)
        self.trigger.armed = (task.task_id, stage.value, fault.cut)
        delivery = self.delivery(task)
        held = False
        try:
            try:
                await self.consumer.process(delivery)
            except DependencyUnavailable:  # left on the broker, as a worker leaves it
                held = True
            if dependency == "broker":
                await self.relay.relay_once()  # the broker is away: the result stays owed
                result.result_while_down = await self.outbox_status(task.task_id)
                if result.result_while_down != "PENDING":
                    result.problems.append(f"result {result.result_while_down} while down")
        finally:
            self.trigger.armed = None
            fault.restore()
        if held:  # the broker delivers it again once the worker resumes
            await self.consumer.process(delivery)
        if delivery.settled is None or delivery.settled.startswith("dead-letter"):
            result.problems.append(f"the delivery ended {delivery.settled}")
        run = await self.finished(task.task_id)
        result.status = run.pipeline_status.value
        result.failed_stage = run.failed_stage.value if run.failed_stage else None
        result.recover_from_stage = run.recover_from_stage.value if run.recover_from_stage else None
        reason = run.failure_reason
        result.code = reason.code.value if reason else None
        self.check_outcome(result, run, dependency, stage)
        await self.drain_results()
        result.result_after = await self.outbox_status(task.task_id)
        if result.result_after != "SENT":
            result.problems.append(f"result {result.result_after} after the fault cleared")
        if run.pipeline_status is PipelineStatus.FAILED:
            await self.retry(task, run, result)
        else:
            result.counts_after_retry = await self.counts(task)
            self.check_agreement(result)
        result.control_untouched = await self.counts_of_control() == self.control
        if not result.control_untouched:
            result.problems.append("the control document changed")
        return result

    def check_outcome(self, result: CellResult, run: ParseRun, dependency: str, cut: Stage) -> None:
        failing = expected_stage(dependency, cut)
        if failing is None:
            if run.pipeline_status is not PipelineStatus.SUCCESS:
                result.problems.append(f"expected SUCCESS, got {result.status} {result.code}")
            return
        if run.pipeline_status is not PipelineStatus.FAILED:
            result.problems.append(f"expected FAILED at {failing.value}, got {result.status}")
            return
        wanted = CODES[(dependency, failing)]
        if run.failure_reason is None or run.failure_reason.code not in wanted:
            result.problems.append(f"code {result.code} not in {sorted(c.value for c in wanted)}")
        if run.failed_stage is None or run.failed_stage.value != failing.value:
            result.problems.append(f"failed at {result.failed_stage}, expected {failing.value}")
        if run.recover_from_stage is not failing:
            result.problems.append(f"recover_from_stage {result.recover_from_stage}")
        for stage in STAGES[: STAGES.index(failing)]:
            if run.status_of(stage).value != "SUCCESS":
                result.problems.append(f"{stage.value} is {run.status_of(stage).value}")

    async def retry(self, task: ParseTaskCommand, failed: ParseRun, result: CellResult) -> None:
        retry = task.retry_of(task.task_id)
        await self.consumer.process(self.delivery(retry))
        run = await self.finished(retry.task_id)
        result.retry_status = run.pipeline_status.value
        if run.pipeline_status is not PipelineStatus.SUCCESS:
            result.problems.append(f"the retry ended {result.retry_status}: {run.failure_reason}")
            return
        assert failed.recover_from_stage is not None
        start = STAGES.index(failed.recover_from_stage)
        for position, (stage, state) in enumerate(run.stages_in_order()):
            (result.inherited if state.inherited else result.redone).append(stage.value)
            if state.inherited != (position < start):
                result.problems.append(f"retry: {stage.value} inherited={state.inherited}")
        await self.drain_results()
        result.counts_after_retry = await self.counts(retry)
        self.check_agreement(result)

    def check_agreement(self, result: CellResult) -> None:
        counts = result.counts_after_retry
        if len(set(counts.values())) != 1 or not counts.get("chunk_children"):
            result.problems.append(f"stores disagree: {counts}")

    # -- helpers --------------------------------------------------------------------------

    async def new_task(self, dataset_id: int) -> ParseTaskCommand:
        self._documents += 1
        n = self._documents
        key = f"raw/doc-{n}.txt"
        await self.storage.put_bytes(SOURCE_BUCKET, key, f"{TEXT}\n\nDocument {n}.".encode())
        return ParseTaskCommand(
            task_id=f"fault-{uuid.uuid4().hex[:12]}",
            original_file_id=1000 + n,
            document_parse_task_id=n,
            user_id=USER,
            dataset_id=dataset_id,
            file_type="txt",
            source_bucket=SOURCE_BUCKET,
            source_object_key=key,
            source_filename=f"doc-{n}.txt",
            md_bucket=MD_BUCKET,
            md_object_key=f"parsed/doc-{n}.md",
            pdf_parser_backend=PdfParserBackend.NAIVE,
        )

    def delivery(self, task: ParseTaskCommand) -> Delivery:
        return Delivery(self.wire.encode_task(task), task.file_type)

    async def run_of(self, task_id: str) -> ParseRun | None:
        async with self.uow() as uow:
            return await uow.runs.get(task_id)

    async def finished(self, task_id: str, timeout: float = 60.0) -> ParseRun:
        """The run once terminal; a run left unfinished (the database was away) is ended by
        the stale-run sweep, as a worker's sweep would."""
        deadline = time.monotonic() + timeout
        while True:
            run = await self.run_of(task_id)
            if run is not None and run.is_terminal:
                return run
            if time.monotonic() > deadline:
                raise RuntimeError(f"run {task_id} did not end: {run}")
            await self.pipeline.converge_stale()
            await asyncio.sleep(0.2)

    async def outbox_status(self, task_id: str) -> str | None:
        async with self.uow() as uow:
            row = await uow.outbox.get(task_id)
        return None if row is None else row.status

    async def drain_results(self, timeout: float = 60.0) -> None:
        """Relay until nothing is owed (the broker may just have come back: backoff)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            await self.relay.relay_once()
            async with self.uow() as uow:
                if not await uow.outbox.list_messages("PENDING", limit=1):
                    return
            await asyncio.sleep(0.25)

    async def counts_of_control(self) -> dict[str, int]:
        return await self._counts(CONTROL_DATASET, "1001")

    async def counts(self, task: ParseTaskCommand) -> dict[str, int]:
        return await self._counts(task.dataset_id, str(task.original_file_id))

    async def _counts(self, dataset_id: int, doc_id: str) -> dict[str, int]:
        """Chunk rows, dense points, sparse points and keyword docs of one document (each
        cell's document has a dataset of its own, so a scope search finds only it)."""
        user, dataset = str(USER), str(dataset_id)
        async with self.uow() as uow:
            children = await uow.chunks.list_children(
                DocumentScope(user, dataset, doc_id), limit=10_000
            )
        dense = await self.vectors.query_dense(user, dataset, [1.0] * DIMENSION, 10_000)
        sparse_query = self.sparse.encode_query("alpha")
        sparse = await self.vectors.query_sparse(user, dataset, sparse_query, 10_000)
        tokens = self.tokenizer.tokenize("alpha")
        keyword = await self.keywords.search(user, dataset, tokens, 10_000)
        return {
            "chunk_children": len(children),
            "dense": len(dense),
            "sparse": len(sparse),
            "keyword": len(keyword),
        }


async def _embedded_index(directory: Path) -> Any:
    index = EmbeddedVectorIndex(directory, busy_timeout_ms=500)
    try:
        yield index
    finally:
        await index.close()


def _bind_result_queue(result_topic: str) -> None:
    connection = pika.BlockingConnection(pika.ConnectionParameters(*RABBIT))
    try:
        channel = connection.channel()
        channel.exchange_declare(result_topic, exchange_type="topic", durable=True)
        channel.queue_declare(f"{result_topic}.business", arguments={"x-expires": 3_600_000})
        channel.queue_bind(f"{result_topic}.business", result_topic, routing_key="#")
    finally:
        connection.close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


async def run_campaign(
    cells: Sequence[tuple[str, Stage]], root: Path | None = None
) -> list[CellResult]:
    """Every cell on one set of servers and one container; the servers are stopped and the
    database dropped at the end."""
    results, _ = await run_campaign_with_backlogs(cells, (), root)
    return results


async def run_campaign_with_backlogs(
    cells: Sequence[tuple[str, Stage]],
    backlogs: Sequence[str],
    root: Path | None = None,
    *,
    backlog_tasks: int = 50,
    outage_seconds: float = 5.0,
) -> tuple[list[CellResult], list[BacklogResult]]:
    """The stage cells, then a backlog-during-outage cell per dependency in `backlogs`."""
    own = root is None
    base = Path(tempfile.mkdtemp(prefix="ragline-faults-")) if root is None else root
    servers = await asyncio.to_thread(Servers, base)
    results: list[CellResult] = []
    held: list[BacklogResult] = []
    try:
        campaign = FaultCampaign(servers, base / "data")
        try:
            await campaign.open()
            for dependency, stage in cells:
                cell = await campaign.cell(dependency, stage)
                log.info("%s @ %s: %s %s", dependency, stage.value, cell.outcome, cell.problems)
                results.append(cell)
            for dependency in backlogs:
                backlog = await backlog_cell(campaign, dependency, backlog_tasks, outage_seconds)
                log.info("backlog, %s away: %s %s", dependency, backlog.outcome, backlog.problems)
                held.append(backlog)
        finally:
            await campaign.close()
    finally:
        await asyncio.to_thread(servers.close)
        if own:
            shutil.rmtree(base, ignore_errors=True)
    return results, held
