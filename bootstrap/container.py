"""Composition root: the only place that chooses adapters.

A dependency-injector container built from pydantic settings. Ports are providers typed by
the factory that builds them (`bootstrap.factories`, one port type each); clients that hold
connections, files or threads are `providers.Resource`s, opened on first use and closed by
`shutdown_resources()`. Use cases are providers too; the entry points never see this
container but its typed face (`bootstrap.entry.entry_for`: `UseCases` in an `Entry`).
Providers are lazy, so a command that needs only the chunker opens no database and
loads no model. Tests override providers (`container.vectors.override(providers.Object(
fake))`) instead of patching modules; `tests/fakes/harness.py` builds the pipeline so.
"""

from __future__ import annotations

from pathlib import Path

from dependency_injector import containers, providers

from ragline.adapters.claim_holders.local_processes import LocalProcessHolders
from ragline.adapters.inbound.task_consumer import Worker
from ragline.application.chunking.preview import PreviewChunks
from ragline.application.debug import ExtractMarkdown, PublishTaskMessage, SubmitTask
from ragline.application.documents import (
    DeleteDocument,
    EditChunk,
    ListChunks,
    ListDocuments,
    ReindexDocument,
    SetDocumentMetadata,
)
from ragline.application.evaluation import EvaluateRetrieval
from ragline.application.health import CheckHealth, adapter_probes
from ragline.application.ingest.use_case import IngestFiles
from ragline.application.outbox import ManageOutbox
from ragline.application.parsing import ParseBatchRunner, ReadParse, RequestParse, SubmitParse
from ragline.application.pipeline.orchestrator import ParseTaskPipeline
from ragline.application.pipeline.outbox_relay import OutboxRelay
from ragline.application.pipeline.services import StageServices
from ragline.application.provisioning import ManageModelConfigs, ProvisionEmbedding
from ragline.application.redrive import RedriveTaskDeadLetters
from ragline.application.reembedding import Reembeddings
from ragline.application.reembedding.loop import ReembeddingLoop
from ragline.application.reembedding.manage import ManageReembeddings
from ragline.application.runs import CheckTaskId, ListRuns, RetryRun
from ragline.application.search.use_case import HybridSearch
from ragline.application.uploads import UploadDocument
from ragline.bootstrap import factories
from ragline.bootstrap import reembedding_factories as reembedding
from ragline.bootstrap.configured import configured
from ragline.bootstrap.registry import adapter_labels
from ragline.bootstrap.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(configured)

    # ports
    clock = providers.Singleton(factories.clock)
    wire_format = providers.Singleton(factories.wire_format)
    metrics = providers.Singleton(factories.pipeline_metrics)
    tracing = providers.Singleton(factories.tracing, settings=settings)
    uow_factory = providers.Resource(factories.unit_of_work_factory, settings=settings, clock=clock)
    storage = providers.Singleton(factories.object_storage, settings=settings)
    workspace = providers.Resource(factories.workspace, settings=settings)
    parser = providers.Singleton(factories.parser, settings=settings, workspace=workspace)
    mineru_parser = providers.Singleton(factories.mineru_parser, settings=settings)
    tokenizer = providers.Singleton(factories.tokenizer)
    sparse = providers.Singleton(factories.sparse_encoder, tokenizer=tokenizer)
    vectors = providers.Resource(factories.vector_index, settings=settings)
    keywords = providers.Resource(factories.keyword_index, settings=settings)
    default_embedding = providers.Singleton(factories.default_embedding, settings=settings)
    embedders = providers.Singleton(factories.embedder_resolver, settings=settings)
    bus = providers.Resource(factories.open_message_bus, settings=settings)
    task_publisher = bus.provided.task_publisher.call()
    parse_task_publisher = providers.Singleton(
        factories.parse_task_publisher, publisher=task_publisher
    )

    # chunking (pure CPU; no I/O)
    structure_builder = providers.Singleton(factories.structure_builder)
    chunk_document = providers.Singleton(
        factories.chunk_document,
        structure=structure_builder,
        settings=settings,
        default=default_embedding,
    )

    # the parse-task use case and what runs it (`worker`: consumers + relay; `ragline worker`
    # passes its own `consumers`)
    chunker = providers.Singleton(
        factories.chunker, chunk_document=chunk_document, settings=settings
    )
    pipeline_settings = providers.Singleton(factories.pipeline_settings, settings=settings)

    # the parse cache (docs/design/0003-parse-cache.md): planning, batch workers, reading
    page_counter = providers.Singleton(factories.page_counter)
    parse_cache_settings = providers.Singleton(factories.parse_cache_settings, settings=settings)
    # the one check of every object reference a caller names (docs/security.md)
    reference_policy = providers.Singleton(
        factories.reference_policy, settings=settings, cache=parse_cache_settings
    )
    page_store = providers.Singleton(
        factories.page_store, storage=storage, workspace=workspace, cache=parse_cache_settings
    )
    request_parse = providers.Factory(
        RequestParse,
        uow_factory,
        clock,
        pages_per_batch=parse_cache_settings.provided.pages_per_batch,
    )
    submit_parse = providers.Factory(
        SubmitParse,
        uow_factory=uow_factory,
        storage=storage,
        workspace=workspace,
        counter=page_counter,
        pages=page_store,
        request_parse=request_parse,
        references=reference_policy,
    )
    read_parse = providers.Factory(ReadParse, uow_factory=uow_factory, pages=page_store)
    claim_holders = providers.Singleton(LocalProcessHolders)
    batch_owner = claim_holders.provided.name
    parse_batch_runner = providers.Singleton(
        ParseBatchRunner,
        uow_factory=uow_factory,
        storage=storage,
        parser=parser,
        workspace=workspace,
        clock=clock,
        pages=page_store,
        settings=parse_cache_settings,
        owner=batch_owner,
        holders=claim_holders,
    )
    cleaning_parse_cache = providers.Singleton(
        factories.cleaning_parse_cache,
        settings=settings,
        submit=submit_parse,
        runner=parse_batch_runner,
        reader=read_parse,
        storage=storage,
    )
    stage_services = providers.Singleton(
        StageServices,
        uow=uow_factory,
        clock=clock,
        storage=storage,
        parser=parser,
        chunker=chunker,
        embedders=embedders,
        vectors=vectors,
        keywords=keywords,
        tokenizer=tokenizer,
        sparse=sparse,
        workspace=workspace,
        references=reference_policy,
        settings=pipeline_settings,
        metrics=metrics,
        tracing=tracing,
        parse_cache=cleaning_parse_cache,
        mineru=mineru_parser,
    )
    pipeline = providers.Singleton(ParseTaskPipeline, services=stage_services)
    relay = providers.Singleton(
        OutboxRelay,
        uow_factory,
        providers.Singleton(
            factories.parse_result_publisher, publisher=bus.provided.result_publisher.call()
        ),
        clock,
        dead_letters=providers.Singleton(
            factories.parse_result_publisher, publisher=bus.provided.result_dead_letters.call()
        ),
        metrics=metrics,
    )

    worker = providers.Factory(
        Worker,
        pipeline,
        wire_format,
        bus,
        relay,
        consumers=settings.provided.ingest_workers,
        concurrency=settings.provided.worker_concurrency,
        shared_database=settings.provided.shared_database,
    )

    # the other use cases
    provision_embedding = providers.Factory(
        ProvisionEmbedding, uow_factory=uow_factory, default=default_embedding
    )
    ingest_files = providers.Factory(
        IngestFiles,
        uow_factory,
        storage,
        parse_task_publisher,
        clock,
        source_bucket=settings.provided.source_bucket,
        md_bucket=settings.provided.markdown_bucket,
        references=reference_policy,
        pdf_backend=providers.Callable(factories.pdf_backend, settings=settings),
        # with the worker in this process, exactly `ingest_workers` tasks are in flight:
        # polling more pending runs than that reads runs nobody is working on
        poll_window=settings.provided.ingest_poll_window,
    )
    search_tuning = providers.Singleton(factories.search_tuning, settings=settings)
    reranker = providers.Singleton(factories.reranker, settings=settings)
    hybrid_search = providers.Factory(
        HybridSearch,
        uow_factory=uow_factory,
        vectors=vectors,
        keywords=keywords,
        tokenizer=tokenizer,
        sparse=sparse,
        embedders=embedders,
        tuning=search_tuning,
        reranker=reranker,
        metrics=metrics,
    )
    evaluate_retrieval = providers.Factory(EvaluateRetrieval, search=hybrid_search)
    list_runs = providers.Factory(ListRuns, uow_factory=uow_factory)
    manage_outbox = providers.Factory(
        ManageOutbox, uow_factory=uow_factory, clock=clock, metrics=metrics
    )
    # re-embedding a user's chunks into a new generation (issue 21): planned by set-embedding
    # --reembed, stepped by the worker loops; the index is the generation-aware VectorSpaces
    # re-embedding a user's chunks into a new generation (issue 21): planned by set-embedding
    # --reembed, stepped by the worker loops; the index is the generation-aware VectorSpaces
    reembed_settings = settings.provided.reembed
    reembed_background = providers.Resource(reembedding.background, reembed_settings)
    reembeddings = providers.Factory(
        Reembeddings,
        uow=uow_factory,
        vectors=vectors,
        embedders=embedders,
        contextual_headers=pipeline_settings.provided.contextual_headers,  # VECTORIZING's
        batch_size=reembed_settings.batch_size,
        lease=providers.Callable(reembedding.lease, reembed_settings),
        background=reembed_background,
        metrics=metrics,
        clock=clock,
    )
    model_configs = providers.Factory(
        ManageModelConfigs,
        uow_factory=uow_factory,
        embedders=embedders,
        reembeddings=reembeddings,
        clock=clock,
        default=default_embedding,
    )
    list_documents = providers.Factory(ListDocuments, uow_factory=uow_factory)
    list_chunks = providers.Factory(ListChunks, uow_factory=uow_factory)
    edit_chunk = providers.Factory(
        EditChunk,
        uow_factory=uow_factory,
        vectors=vectors,
        keywords=keywords,
        embedders=embedders,
        sparse=sparse,
        tokenizer=tokenizer,
        contextual_headers=settings.provided.contextual_headers,
    )
    delete_document = providers.Factory(
        DeleteDocument,
        uow_factory=uow_factory,
        vectors=vectors,
        keywords=keywords,
        storage=storage,
        clock=clock,
        references=reference_policy,
    )
    set_document_metadata = providers.Factory(
        SetDocumentMetadata, uow_factory=uow_factory, vectors=vectors, keywords=keywords
    )
    reindex_document = providers.Factory(
        ReindexDocument,
        uow_factory=uow_factory,
        tasks=parse_task_publisher,
        references=reference_policy,
    )
    retry_run = providers.Factory(
        RetryRun,
        uow_factory=uow_factory,
        tasks=parse_task_publisher,
        references=reference_policy,
        language=pipeline_settings.provided.language,
    )
    check_task_id = providers.Factory(CheckTaskId, uow_factory=uow_factory)
    submit_task = providers.Factory(
        SubmitTask,
        tasks=parse_task_publisher,
        references=reference_policy,
        task_ids=check_task_id,
    )
    upload_document = providers.Factory(
        UploadDocument,
        uow_factory=uow_factory,
        storage=storage,
        submit=submit_task,
        references=reference_policy,
        clock=clock,
        source_bucket=settings.provided.source_bucket,
        md_bucket=settings.provided.markdown_bucket,
        max_bytes=providers.Callable(factories.upload_max_bytes, settings=settings),
        pdf_backend=providers.Callable(factories.pdf_backend, settings=settings),
    )
    publish_task_message = providers.Factory(
        PublishTaskMessage, tasks=task_publisher, references=reference_policy
    )
    extract_markdown = providers.Factory(
        ExtractMarkdown,
        parser=parser,
        storage=storage,
        workspace=workspace,
        limits=pipeline_settings.provided.parse_limits,
        references=reference_policy,
    )
    preview_chunks = providers.Factory(
        PreviewChunks, chunk_document=chunk_document, extract=extract_markdown
    )
    redrive_tasks = providers.Factory(
        RedriveTaskDeadLetters, bus=bus, wire=wire_format, metrics=metrics
    )
    # re-embedding (issue 21): the worker/serve loop and what the surfaces show
    reembedding_loop = providers.Factory(
        ReembeddingLoop,
        reembeddings=reembeddings,
        clock=clock,
        owner=batch_owner,
        poll=providers.Callable(reembedding.poll, reembed_settings),
    )
    manage_reembeddings = providers.Factory(
        ManageReembeddings, reembeddings=reembeddings, clock=clock
    )
    check_health = providers.Factory(
        CheckHealth,
        providers.Callable(
            adapter_probes,
            providers.Callable(adapter_labels, settings),
            uow_factory=uow_factory.provider,
            storage=storage.provider,
            bucket=settings.provided.source_bucket,
            bus=bus.provider,
            vectors=vectors.provider,
            keywords=keywords.provider,
            embedders=embedders.provider,
            default_embedding=default_embedding,
            advise_scan_above=settings.provided.vector_scan_advice_points,
        ),
    )


def container_for(data_dir: Path, **settings: object) -> Container:
    """The container of one CLI/worker process rooted at `data_dir`; `settings` override
    what the environment says (e.g. `chunk_plan` from `ragline ingest --plan`). Settings
    are read here, so an unknown vendor is refused (`SettingsRefused`, a Misconfiguration)
    before anything opens."""
    container = Container()
    chosen: Settings = configured(data_dir=data_dir, **settings)
    container.settings.override(providers.Object(chosen))
    return container
