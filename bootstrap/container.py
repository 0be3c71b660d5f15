"""Composition root: the only place that chooses adapters.

A dependency-injector container built from pydantic settings. Providers are lazy, so a
command that needs only the chunker does not open databases or load models.
"""

from __future__ import annotations

from pathlib import Path

from dependency_injector import containers, providers

from ragline.bootstrap.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(Settings)


def build_services(data_dir: Path) -> Container:
    """The container for one CLI/worker process rooted at `data_dir`."""
    container = Container()
    container.settings.override(providers.Singleton(Settings, data_dir=data_dir))
    return container
