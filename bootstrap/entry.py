"""The entry points' typed face, built from the container (wiring only).

Each field closes over the container's provider, so a test's `container.x.override(...)`
made before or after `entry_for` is what the entry point gets; a provider named here that
the container lacks fails at `entry_for`, and one of the wrong type fails mypy.
"""

from __future__ import annotations

from typing import TypeVar

from dependency_injector import providers

from ragline.adapters.inbound.entry import Entry, EntrySettings
from ragline.adapters.inbound.task_consumer import Worker
from ragline.application.health import obtain
from ragline.application.use_cases import Build, UseCases
from ragline.bootstrap.container import Container

T = TypeVar("T")


def built(provider: providers.Provider[T]) -> Build[T]:
    """What `provider` gives, awaited when it opens a resource on the way."""

    async def build() -> T:
        return await obtain(provider)

    return build


def use_cases_of(container: Container) -> UseCases:
    c = container
    return UseCases(
        ingest_files=built(c.ingest_files),
        provision_embedding=built(c.provision_embedding),
        hybrid_search=built(c.hybrid_search),
        evaluate_retrieval=built(c.evaluate_retrieval),
        list_runs=built(c.list_runs),
        retry_run=built(c.retry_run),
        manage_outbox=built(c.manage_outbox),
        redrive_tasks=built(c.redrive_tasks),
        model_configs=built(c.model_configs),
        list_documents=built(c.list_documents),
        delete_document=built(c.delete_document),
        reindex_document=built(c.reindex_document),
        set_document_metadata=built(c.set_document_metadata),
        list_chunks=built(c.list_chunks),
        edit_chunk=built(c.edit_chunk),
        upload_document=built(c.upload_document),
        check_health=built(c.check_health),
        submit_task=built(c.submit_task),
        publish_task_message=built(c.publish_task_message),
        extract_markdown=built(c.extract_markdown),
        preview_chunks=built(c.preview_chunks),
        submit_parse=built(c.submit_parse),
        read_parse=built(c.read_parse),
        parse_batch_runner=built(c.parse_batch_runner),
        manage_reembeddings=built(c.manage_reembeddings),
        reembedding_loop=built(c.reembedding_loop),
        chunk_document=c.chunk_document,
    )


async def shut_down(container: Container) -> None:
    """Close every resource the container opened (dependency-injector returns None, not an
    awaitable, when no async resource was ever opened)."""
    closing = container.shutdown_resources()
    if closing is not None:
        await closing


def entry_for(container: Container) -> Entry:
    """What the CLI, the HTTP API and `ragline worker` are handed for this container."""

    def settings() -> EntrySettings:
        return container.settings()

    async def worker(*, consumers: int | None = None, concurrency: int | None = None) -> Worker:
        given = {"consumers": consumers, "concurrency": concurrency}
        chosen = {name: count for name, count in given.items() if count is not None}
        return await obtain(lambda: container.worker(**chosen))

    async def close() -> None:
        await shut_down(container)

    return Entry(
        use_cases=use_cases_of(container),
        settings=settings,
        bus=built(container.bus),
        worker=worker,
        close=close,
    )
