"""Adapter factories: settings in, one port implementation out.

A port chosen by configuration is built by its registry entry (`bootstrap.registry`); no
chain of vendors lives here.

Each factory imports its adapter inside the function, so choosing Kafka never imports pika
and `ragline chunk` never loads an embedding model. The factories of clients that hold
connections, files or threads are async generators: the container runs them as
`providers.Resource`, and `shutdown_resources()` closes what was opened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from functools import partial

from ragline.adapters.inbound.task_consumer import TaskDecoder
from ragline.application.access import ObjectArea, ReferencePolicy
from ragline.application.chunking import ChunkDocument
from ragline.application.parsing import (
    PageStore,
    ParseBatchRunner,
    ParseCacheSettings,
    ReadParse,
    SubmitParse,
)
from ragline.application.pipeline.chunker import MarkdownChunker
from ragline.application.pipeline.parse_cache import CleaningParseCache
from ragline.application.pipeline.settings import MineruPolicy, PipelineSettings
from ragline.application.ports.clock import Clock
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.llm import ChatModel
from ragline.application.ports.messaging import MessageBus, Publisher
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.page_count import PageCounter
from ragline.application.ports.parser import ParseLimits, Parser, PdfParserBackend
from ragline.application.ports.reranker import Reranker
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.structure import StructureBuilder
from ragline.application.ports.task_messages import ResultPublisher, TaskPublisher
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.tracing import NO_TRACING, Tracing
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.provisioning import DefaultEmbedding
from ragline.application.search.rerank import ChatReranker
from ragline.application.search.tuning import SearchTuning
from ragline.application.workspace import Workspace
from ragline.bootstrap.registry import (
    DATABASE,
    EMBEDDER,
    KEYWORD_INDEX,
    MESSAGE_BUS,
    OBJECT_STORAGE,
    VECTOR_INDEX,
)
from ragline.bootstrap.settings import Settings


def clock() -> Clock:
    from ragline.adapters.clock.system import SystemClock

    return SystemClock()


def pipeline_metrics() -> PipelineMetrics:
    """Prometheus when prometheus-client is installed (the `http` extra), else nothing."""
    try:
        from ragline.adapters.metrics.prometheus import PrometheusMetrics
    except ImportError:
        return NO_METRICS
    return PrometheusMetrics()


def tracing(settings: Settings) -> Tracing:
    """OpenTelemetry when RAGLINE_OTEL_EXPORTER names an exporter (the `otel` extra); with
    the crash-campaign test hook RAGLINE_TEST_CRASH_AT set, one that can kill this process."""
    chosen = NO_TRACING
    if settings.otel_exporter != "none":
        from ragline.adapters.tracing.otel import configured_tracing

        chosen = configured_tracing(settings.otel_exporter)
    if settings.test_crash_at is None:
        return chosen
    from ragline.adapters.tracing.crash_points import CrashingTracing, CrashPoint

    crash = CrashPoint(
        settings.test_crash_at, settings.test_crash_nth, settings.test_crash_delay_ms
    )
    return CrashingTracing(chosen, crash)


def wire_format() -> TaskDecoder:
    """The task consumers' decoder: the JSON wire format of `ragline.contracts.wire`."""
    from ragline.adapters.wire_format.json import JsonWireFormat

    return JsonWireFormat()


def parse_result_publisher(publisher: Publisher) -> ResultPublisher:
    """Results leave as ParseResult messages on the result topic's publisher (or its
    dead letters')."""
    from ragline.adapters.wire_format.json import JsonResultPublisher

    return JsonResultPublisher(publisher)


def parse_task_publisher(publisher: Publisher) -> TaskPublisher:
    """Tasks leave as ParseTask messages on the task topic's publisher."""
    from ragline.adapters.wire_format.json import JsonTaskPublisher

    return JsonTaskPublisher(publisher)


async def unit_of_work_factory(
    settings: Settings, clock: Clock
) -> AsyncIterator[UnitOfWorkFactory]:
    factory = DATABASE.of(settings).build(settings, clock)
    try:
        yield factory
    finally:
        await factory.dispose()


def object_storage(settings: Settings) -> ObjectStorage:
    return OBJECT_STORAGE.of(settings).build(settings)


def mineru_parser(settings: Settings) -> Parser | None:
    """The MinerU client when a token is configured, else None (the policy decides)."""
    if settings.mineru_token is None:
        return None
    from ragline.adapters.parser.mineru import MineruClient, MineruConfig

    return MineruClient(
        MineruConfig(
            token=settings.mineru_token.get_secret_value(),
            base_url=settings.mineru_base_url,
            model_version=settings.mineru_model_version,
            request_timeout=settings.mineru_timeout_seconds,
            poll_interval=settings.mineru_poll_seconds,
            max_wait=settings.mineru_max_wait_seconds,
        )
    )


def parser(settings: Settings, workspace: Workspace) -> Parser:
    from ragline.adapters.parser.builtin.factory import build_parser

    return build_parser(
        sandbox=True,
        hidden=settings.files_parsers_must_not_read,
        readable=[workspace.folder],
        text_dir=workspace.folder,
        prestart_memory_bytes=parse_limits(settings).max_memory_bytes,
    )


def tokenizer() -> Tokenizer:
    from ragline.adapters.tokenizer.jieba import JiebaTokenizer

    return JiebaTokenizer()


def sparse_encoder(tokenizer: Tokenizer) -> SparseEncoder:
    from ragline.adapters.sparse_encoder.term import TermSparseEncoder

    return TermSparseEncoder(tokenizer)


async def vector_index(settings: Settings) -> AsyncIterator[VectorIndex]:
    index = VECTOR_INDEX.of(settings).build(settings)
    try:
        yield index
    finally:
        await index.close()


async def keyword_index(settings: Settings) -> AsyncIterator[KeywordIndex]:
    index = KEYWORD_INDEX.of(settings).build(settings)
    try:
        yield index
    finally:
        await index.close()


def default_embedding(settings: Settings) -> DefaultEmbedding:
    """The EMBEDDING config embedded mode provisions for a user without one."""
    return EMBEDDER.of(settings).build(settings)


def embedder_resolver(settings: Settings) -> EmbedderResolver:
    from ragline.adapters.embedder.configured import ConfiguredEmbedders

    return ConfiguredEmbedders(
        settings.data_dir / "embedding-cache.sqlite", settings.embedding_batch_size
    )


def message_bus(settings: Settings) -> MessageBus:
    return MESSAGE_BUS.of(settings).build(settings)


async def open_message_bus(settings: Settings) -> AsyncIterator[MessageBus]:
    """The bus as a container resource: `shutdown_resources()` closes every publisher it
    handed out (a worker's Kafka producer is stopped, not garbage-collected, on SIGTERM)."""
    bus = message_bus(settings)
    try:
        yield bus
    finally:
        await bus.close()


def structure_builder() -> StructureBuilder:
    from ragline.adapters.structure.markdown import LineScanStructureBuilder

    return LineScanStructureBuilder()


def chat_model(settings: Settings) -> ChatModel | None:
    """The configured chat model, or None (the `llm` plan then cuts recursively)."""
    if not (settings.llm_base_url and settings.llm_model):
        return None
    from ragline.adapters.llm.openai import OpenAIChatModel

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAIChatModel(
        settings.llm_base_url,
        settings.llm_model,
        api_key=key,
        timeout=settings.llm_timeout_seconds,
    )


def search_tuning(settings: Settings) -> SearchTuning:
    return SearchTuning(
        candidates_per_retriever=settings.search_candidates,
        dense_candidates=settings.search_dense_candidates,
        dense_feedback=settings.search_dense_feedback,
        feedback_weight=settings.search_feedback_weight,
        fusion=settings.search_fusion,
        rrf_k=settings.search_rrf_k,
        weights={
            "dense": settings.search_dense_weight,
            "sparse": settings.search_sparse_weight,
            "bm25": settings.search_bm25_weight,
        },
        parent_evidence=settings.search_parent_evidence,
        sibling_bonus=settings.search_sibling_bonus,
        dedupe=settings.search_dedupe,
        rerank_depth=settings.search_rerank_depth,
        retriever_timeout=settings.search_retriever_timeout,
    )


def reranker(settings: Settings) -> Reranker | None:
    """The chat model as a re-ranker when search_rerank_depth > 0 and one is configured."""
    chat = chat_model(settings) if settings.search_rerank_depth > 0 else None
    return None if chat is None else ChatReranker(chat)


def chunk_document(
    structure: StructureBuilder,
    settings: Settings,
    default: DefaultEmbedding,
) -> ChunkDocument:
    from ragline.adapters.embedder.configured import (
        ConfiguredEmbedders,
        LazySentenceEmbedder,
    )

    embedders = ConfiguredEmbedders(
        settings.data_dir / "embedding-cache.sqlite", settings.embedding_batch_size
    )
    return ChunkDocument(
        structure, embedder=LazySentenceEmbedder(embedders, default), llm=chat_model(settings)
    )


def chunker(chunk_document: ChunkDocument, settings: Settings) -> MarkdownChunker:
    return partial(chunk_document, plan=settings.chunk_plan)


def workspace(settings: Settings) -> Iterator[Workspace]:
    workspace = Workspace(settings.resolved_temp_dir)
    try:
        yield workspace
    finally:
        workspace.release()


def parse_limits(settings: Settings) -> ParseLimits:
    return ParseLimits(
        max_seconds=settings.parse_timeout_seconds,
        max_memory_bytes=settings.parse_max_memory_mb * 1024 * 1024,
    )


def pipeline_settings(settings: Settings) -> PipelineSettings:
    return PipelineSettings(
        result_topic=settings.parse_result_topic,
        embed_batch_size=settings.embedding_batch_size,
        mineru_unavailable=MineruPolicy(settings.mineru_unavailable),
        contextual_headers=settings.contextual_headers,
        parse_limits=parse_limits(settings),
        heartbeat_interval=timedelta(seconds=settings.run_heartbeat_seconds),
        stale_after=timedelta(seconds=settings.stale_run_seconds),
    )


def pdf_backend(settings: Settings) -> PdfParserBackend:
    return PdfParserBackend(settings.pdf_backend)


def upload_max_bytes(settings: Settings) -> int:
    return settings.upload_max_mb * 1024 * 1024


def page_counter() -> PageCounter:
    from ragline.adapters.page_counter.pdfium import PdfiumPageCounter

    return PdfiumPageCounter()


def parse_cache_settings(settings: Settings) -> ParseCacheSettings:
    from datetime import timedelta

    return ParseCacheSettings(
        bucket=settings.parse_cache_bucket,
        prefix=settings.parse_cache_prefix,
        pages_per_batch=settings.parse_pages_per_batch,
        lease=timedelta(seconds=settings.parse_batch_lease_seconds),
        limits=parse_limits(settings),
    )


def page_store(
    storage: ObjectStorage, workspace: Workspace, cache: ParseCacheSettings
) -> PageStore:
    return PageStore(storage, workspace, cache.bucket, cache.prefix)


def reference_policy(settings: Settings, cache: ParseCacheSettings) -> ReferencePolicy:
    """The one rule of every object reference a caller names (docs/security.md): tenants
    under `<user_id>/` of the tenant buckets; nobody targets the parse cache's area."""
    return ReferencePolicy.of(
        settings.resolved_tenant_buckets, [ObjectArea(cache.bucket, cache.prefix)]
    )


def cleaning_parse_cache(
    settings: Settings,
    submit: SubmitParse,
    runner: ParseBatchRunner,
    reader: ReadParse,
    storage: ObjectStorage,
) -> CleaningParseCache | None:
    if not settings.parse_cache:
        return None
    return CleaningParseCache(submit, runner, reader, storage)
