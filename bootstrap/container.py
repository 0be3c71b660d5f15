"""Composition root: the only place that chooses adapters.

A dependency-injector container built from pydantic settings. Providers are lazy, so a
command that needs only the chunker does not open databases or load models. Tests override
providers (`container.vectors.override(...)`) instead of patching modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from ragline.bootstrap import factories
from ragline.bootstrap.settings import Settings


def _structure_builder() -> Any:
    # imported on first use: `ragline --help` stays fast
    from ragline.adapters.markdown_structure import LineScanStructureBuilder

    return LineScanStructureBuilder()


def _chunk_document(structure: Any, settings: Settings) -> Any:
    from ragline.application.chunking import ChunkDocument
    from ragline.bootstrap.chunking_models import LazySentenceEmbedder, chat_model

    return ChunkDocument(
        structure, embedder=LazySentenceEmbedder(settings), llm=chat_model(settings)
    )


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(Settings)

    # chunking (pure CPU; no I/O)
    structure_builder = providers.Singleton(_structure_builder)
    chunk_document = providers.Factory(
        _chunk_document, structure=structure_builder, settings=settings
    )

    # ports
    clock = providers.Singleton(factories.clock)
    uow_factory = providers.Singleton(factories.unit_of_work_factory, settings=settings)
    storage = providers.Singleton(factories.object_storage, settings=settings)
    parser = providers.Singleton(factories.parser)
    tokenizer = providers.Singleton(factories.tokenizer)
    sparse = providers.Singleton(factories.sparse_encoder, tokenizer=tokenizer)
    vectors = providers.Singleton(factories.vector_index, settings=settings)
    keywords = providers.Singleton(factories.keyword_index, settings=settings)
    embedders = providers.Singleton(factories.embedder_resolver, settings=settings)
    bus = providers.Singleton(factories.message_bus, settings=settings)

    # the parse-task use case
    pipeline = providers.Singleton(
        factories.pipeline,
        settings=settings,
        uow=uow_factory,
        clock=clock,
        storage=storage,
        parser=parser,
        chunk_document=chunk_document,
        embedders=embedders,
        vectors=vectors,
        keywords=keywords,
        tokenizer=tokenizer,
        sparse=sparse,
    )
    relay = providers.Singleton(
        factories.outbox_relay, settings=settings, uow=uow_factory, bus=bus, clock=clock
    )


def build_services(data_dir: Path) -> Any:
    """The services for one CLI/worker process rooted at `data_dir`."""
    from ragline.bootstrap.services import Services

    container = Container()
    container.settings.override(providers.Singleton(Settings, data_dir=data_dir))
    return Services(container)
