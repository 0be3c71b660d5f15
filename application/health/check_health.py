"""CheckHealth: build and touch every configured adapter, and report what answers.

Each probe gets its port through a provider (a callable), so an adapter that cannot even
be built (a bad URL, a missing package) is reported as a failed check like one that does
not answer, and the other checks still run.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import attrs

from ragline.application.error_text import describe
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.messaging import MessageBus
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.sparse_encoder import SparseVector
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.provisioning import DefaultEmbedding

Probe = Callable[[], Awaitable[str]]
"""Touches one adapter; returns what it saw, raises when the adapter does not answer."""


@attrs.frozen
class Check:
    """One line of `ragline doctor`."""

    part: str
    adapter: str
    ok: bool
    detail: str


@attrs.frozen
class NamedProbe:
    part: str
    adapter: str
    probe: Probe


class CheckHealth:
    def __init__(self, probes: Sequence[NamedProbe]) -> None:
        self._probes = probes

    async def __call__(self) -> list[Check]:
        return [await _check(p.part, p.adapter, p.probe) for p in self._probes]


async def _check(part: str, adapter: str, probe: Probe) -> Check:
    try:
        return Check(part, adapter, True, await probe())
    except Exception as error:  # doctor reports every failure instead of stopping
        return Check(part, adapter, False, describe(error))


T = TypeVar("T")
Obtain = Callable[[], T | Awaitable[T]]
"""A provider of a port: the container's providers return the port, or an awaitable of it
when the port is opened asynchronously."""


async def obtain(get: Obtain[T]) -> T:
    """The port a provider gives, awaited when it is opened asynchronously."""
    value = get()
    if inspect.isawaitable(value):
        return await value
    return value


def adapter_probes(
    labels: dict[str, str],
    *,
    uow_factory: Obtain[UnitOfWorkFactory],
    storage: Obtain[ObjectStorage],
    bucket: str,
    bus: Obtain[MessageBus],
    vectors: Obtain[VectorIndex],
    keywords: Obtain[KeywordIndex],
    embedders: Obtain[EmbedderResolver],
    default_embedding: DefaultEmbedding,
) -> list[NamedProbe]:
    """The six checks of `ragline doctor`; `labels` names each part's adapter."""

    async def database() -> str:
        async with (await obtain(uow_factory))() as uow:
            runs = await uow.runs.list_recent(1)
        return f"migrated; {'has runs' if runs else 'no runs yet'}"

    async def object_storage() -> str:
        store = await obtain(storage)
        await store.ensure_bucket(bucket)
        await store.stat(bucket, "ragline-doctor-probe")
        return f"bucket {bucket} reachable"

    async def message_bus() -> str:
        return await (await obtain(bus)).probe()

    async def vector_index() -> str:
        index = await obtain(vectors)
        hits = await index.query_sparse("doctor", "doctor", SparseVector([1], [1.0]), 1)
        return f"search answered ({len(hits)} hits)"

    async def keyword_index() -> str:
        hits = await (await obtain(keywords)).search("doctor", "doctor", ["probe"], 1)
        return f"search answered ({len(hits)} hits)"

    async def embedder() -> str:
        model = await (await obtain(embedders)).resolve(default_embedding.for_user("doctor"))
        started = time.perf_counter()
        vector = await asyncio.to_thread(model.embed_query, "ping")
        elapsed = (time.perf_counter() - started) * 1000
        return f"{model.model_name}: dimension {len(vector)}, one query {elapsed:.0f} ms"

    checks: list[tuple[str, str, Probe]] = [
        ("database", "database", database),
        ("object storage", "object_storage", object_storage),
        ("message bus", "message_bus", message_bus),
        ("vector index", "vector_index", vector_index),
        ("keyword index", "keyword_index", keyword_index),
        ("embedder", "embedder", embedder),
    ]
    return [NamedProbe(part, labels[key], probe) for part, key, probe in checks]
