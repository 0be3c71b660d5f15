"""Composition root: the only place that chooses adapters.

A dependency-injector container built from pydantic settings. Providers are lazy, so a
command that needs only the chunker does not open databases or load models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from ragline.bootstrap.settings import Settings


def _structure_builder() -> Any:
    # imported on first use: `ragline --help` stays fast
    from ragline.adapters.markdown_structure import LineScanStructureBuilder

    return LineScanStructureBuilder()


def _chunk_document(structure: Any) -> Any:
    from ragline.application.chunking import ChunkDocument

    return ChunkDocument(structure)


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(Settings)
    structure_builder = providers.Singleton(_structure_builder)
    chunk_document = providers.Factory(_chunk_document, structure=structure_builder)


def build_services(data_dir: Path) -> Container:
    """The container for one CLI/worker process rooted at `data_dir`."""
    container = Container()
    container.settings.override(providers.Singleton(Settings, data_dir=data_dir))
    return container
