"""The typed Entry bootstrap hands the CLI and the HTTP API: every use case it names is the
container's, of the type `UseCases` declares, and a test's provider override reaches it."""

from __future__ import annotations

import asyncio
import typing
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs
import pytest
from dependency_injector import providers

from ragline.adapters.inbound.entry import unwired
from ragline.application.chunking.chunk_document import ChunkDocument
from ragline.application.runs import ListRuns
from ragline.application.use_cases import UseCases
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for


def _declared() -> dict[str, type]:
    """Each field's use case type: `Build[X]` (an awaitable of X) or a plain getter of X."""
    hints = typing.get_type_hints(UseCases)
    declared: dict[str, type] = {}
    for field in attrs.fields(UseCases):
        _, returned = typing.get_args(hints[field.name])
        if typing.get_origin(returned) is typing.get_origin(Awaitable[int]):
            (returned,) = typing.get_args(returned)
        declared[field.name] = returned
    return declared


def test_every_use_case_is_built_with_its_declared_type(tmp_path: Path) -> None:
    container = container_for(tmp_path / "data")
    entry = entry_for(container)
    declared = _declared()
    assert declared["list_runs"] is ListRuns and declared["chunk_document"] is ChunkDocument

    async def build_all() -> dict[str, object]:
        try:
            built: dict[str, object] = {}
            for name in declared:
                get: Callable[[], object] = getattr(entry.use_cases, name)
                value = get()
                built[name] = await value if isinstance(value, Awaitable) else value
            return built
        finally:
            await entry.close()

    built = asyncio.run(build_all())
    wrong = {n: type(v).__name__ for n, v in built.items() if not isinstance(v, declared[n])}
    assert wrong == {}
    assert entry.settings().data_dir == tmp_path / "data"


def test_an_override_made_after_the_entry_is_what_the_entry_gives(tmp_path: Path) -> None:
    container = container_for(tmp_path / "data")
    entry = entry_for(container)
    stand_in = object()  # what a test puts in the container's place
    container.list_runs.override(providers.Object(stand_in))
    assert asyncio.run(entry.use_cases.list_runs()) is stand_in
    container.list_runs.reset_override()
    fresh = asyncio.run(entry.use_cases.list_runs())
    assert isinstance(fresh, ListRuns) and fresh is not stand_in
    asyncio.run(entry.close())


def test_the_worker_takes_the_counts_a_command_gives(tmp_path: Path) -> None:
    entry = entry_for(container_for(tmp_path / "data", ingest_workers=3))

    async def counts() -> tuple[tuple[int, int], tuple[int, int]]:
        try:
            configured = await entry.worker()
            chosen = await entry.worker(consumers=1, concurrency=2)
            return (configured.consumers, configured.concurrency), (
                chosen.consumers,
                chosen.concurrency,
            )
        finally:
            await entry.close()

    configured, chosen = asyncio.run(counts())
    assert configured[0] == 3 and chosen == (1, 2)


def test_the_routes_only_entry_refuses_every_use() -> None:
    entry = unwired()
    with pytest.raises(RuntimeError, match="nothing is wired"):
        asyncio.run(entry.use_cases.list_runs())
    with pytest.raises(RuntimeError, match="nothing is wired"):
        entry.settings()
