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
from collections.abc import AsyncIterator, Sequence
from typing import Any

from dependency_injector import providers

from ragline.application.ingest.identity import SourceFile
from ragline.application.ingest.use_case import IngestFiles, IngestObserver, IngestSummary
from ragline.application.pipeline.consumer import TaskConsumer
from ragline.application.search.use_case import HybridSearch, SearchHit
from ragline.bootstrap.container import Container
from ragline.bootstrap.embedders import default_embedding_config
from ragline.bootstrap.settings import MqVendor, Settings
from ragline.domain.parse_run import ParseRun

log = logging.getLogger("ragline")


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
        self._use("vectors"), self._use("keywords")  # built for the pipeline; closed by close()
        bus = self._use("bus")
        relay = self._use("relay")
        pipeline.start_up()
        sources = [bus.task_source() for _ in range(consumers)]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(TaskConsumer(pipeline, s).run()) for s in sources]
        tasks.append(asyncio.create_task(relay.run(stop, poll_seconds=0.1)))
        try:
            yield
        finally:
            stop.set()
            for source in sources:
                with contextlib.suppress(Exception):
                    await source.close()
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
        )
        try:
            if not with_worker:
                return await use_case(sources, user_id, dataset_id, observer, force=force)
            async with self.worker():
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
            await self.provision_embedding(user_id)
            return await search.search_many(queries, user_id, dataset_id, top_k)
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
