"""Adapter factories: settings in, one port implementation out.

Each factory imports its adapter inside the function, so choosing Kafka never imports pika
and `ragline chunk` never loads an embedding model.
"""

from __future__ import annotations

from typing import Any

from ragline.bootstrap.settings import (
    KeywordVendor,
    ObjectStoreVendor,
    Settings,
    VectorVendor,
)


def clock() -> Any:
    from ragline.adapters.system_clock import SystemClock

    return SystemClock()


def unit_of_work_factory(settings: Settings) -> Any:
    from ragline.adapters.sql import (
        ApiKeyCipher,
        create_unit_of_work_factory,
        load_or_create_key_file,
        upgrade_to_head,
    )

    url = settings.resolved_database_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade_to_head(url)
    if settings.secret_key is not None:
        key: bytes | str = settings.secret_key.get_secret_value()
    else:
        key = load_or_create_key_file(settings.data_dir / "secret.key")
    return create_unit_of_work_factory(url, cipher=ApiKeyCipher(key))


def object_storage(settings: Settings) -> Any:
    secret = settings.s3_secret_key.get_secret_value() if settings.s3_secret_key else None
    if settings.object_store is ObjectStoreVendor.S3:
        from ragline.adapters.s3_storage import S3ObjectStorage

        return S3ObjectStorage(
            endpoint_url=settings.s3_endpoint_url,
            access_key=settings.s3_access_key,
            secret_key=secret,
            region=settings.s3_region,
        )
    if settings.object_store is ObjectStoreVendor.MINIO:
        from urllib.parse import urlsplit

        from ragline.adapters.minio_storage import MinioObjectStorage

        if not settings.s3_endpoint_url:
            raise ValueError("RAGLINE_S3_ENDPOINT_URL is required for the minio object store")
        endpoint = urlsplit(settings.s3_endpoint_url)
        return MinioObjectStorage(
            endpoint=endpoint.netloc or endpoint.path,
            access_key=settings.s3_access_key,
            secret_key=secret,
            secure=endpoint.scheme == "https",
            region=settings.s3_region,
        )
    from ragline.adapters.local_storage import LocalObjectStorage

    return LocalObjectStorage(settings.data_dir / "objects")


def parser() -> Any:
    from ragline.adapters.parsers.factory import build_parser

    return build_parser(sandbox=True)


def tokenizer() -> Any:
    from ragline.adapters.jieba_tokenizer import JiebaTokenizer

    return JiebaTokenizer()


def sparse_encoder(tokenizer: Any) -> Any:
    from ragline.adapters.term_sparse import TermSparseEncoder

    return TermSparseEncoder(tokenizer)


def vector_index(settings: Settings) -> Any:
    if settings.resolved_vector_index is VectorVendor.EMBEDDED:
        from ragline.adapters.embedded_vector import EmbeddedVectorIndex

        return EmbeddedVectorIndex(settings.data_dir / "vectors")

    from ragline.adapters.qdrant_vector import QdrantVectorIndex

    if settings.qdrant_url:
        return QdrantVectorIndex(settings.qdrant_collection, url=settings.qdrant_url)
    path = settings.data_dir / "qdrant"
    path.mkdir(parents=True, exist_ok=True)
    return QdrantVectorIndex(settings.qdrant_collection, path=str(path))


def keyword_index(settings: Settings) -> Any:
    if settings.keyword_index is KeywordVendor.ELASTICSEARCH:
        from ragline.adapters.elasticsearch_keyword import ElasticsearchKeywordIndex

        return ElasticsearchKeywordIndex(
            settings.elasticsearch_url, index=settings.elasticsearch_index
        )
    from ragline.adapters.tantivy_keyword import TantivyKeywordIndex

    return TantivyKeywordIndex(settings.data_dir / "tantivy")


def embedder_resolver(settings: Settings) -> Any:
    from ragline.bootstrap.embedders import ConfiguredEmbedders

    return ConfiguredEmbedders(settings)


def message_bus(settings: Settings) -> Any:
    from ragline.bootstrap.bus import bus_for

    return bus_for(settings)


def pipeline(
    settings: Settings,
    uow: Any,
    clock: Any,
    storage: Any,
    parser: Any,
    chunk_document: Any,
    embedders: Any,
    vectors: Any,
    keywords: Any,
    tokenizer: Any,
    sparse: Any,
) -> Any:
    from functools import partial

    from ragline.application.pipeline.orchestrator import ParseTaskPipeline
    from ragline.application.pipeline.services import StageServices
    from ragline.application.pipeline.settings import PipelineSettings
    from ragline.application.pipeline.workspace import Workspace
    from ragline.application.ports.parser import ParseLimits

    limits = ParseLimits(
        max_seconds=settings.parse_timeout_seconds,
        max_memory_bytes=settings.parse_max_memory_mb * 1024 * 1024,
    )
    services = StageServices(
        uow=uow,
        clock=clock,
        storage=storage,
        parser=parser,
        chunker=partial(chunk_document, plan=settings.chunk_plan),
        embedders=embedders,
        vectors=vectors,
        keywords=keywords,
        tokenizer=tokenizer,
        sparse=sparse,
        workspace=Workspace(settings.resolved_temp_dir),
        settings=PipelineSettings(
            result_topic=settings.parse_result_topic,
            embed_batch_size=settings.embedding_batch_size,
            mineru_enabled=False,
            parse_limits=limits,
        ),
    )
    return ParseTaskPipeline(services)


def outbox_relay(settings: Settings, uow: Any, bus: Any, clock: Any) -> Any:
    from ragline.application.pipeline.outbox_relay import OutboxRelay

    return OutboxRelay(uow, bus.result_publisher(), clock, dead_letters=bus.result_dead_letters())
