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
from ragline.application.ports.vector_index import ScopeSizes, VectorIndex
from ragline.application.provisioning import DefaultEmbedding

EXACT_SCAN_ADVICE_POINTS = 300_000
"""Points in one scope past which an exact-scan vector index (the embedded one) answers a
query in more than 100 ms p95 on a 2-core machine: benchmarks/vector_scale, single-scope
ladder (docs/benchmarks.md, benchmarks/results/vector_scale.json)."""


@attrs.frozen
class Observed:
    """What a probe saw, with advice for the operator when the adapter answers but does
    not suit the data it holds."""

    detail: str
    advice: str = ""


Probe = Callable[[], Awaitable[str | Observed]]
"""Touches one adapter; returns what it saw, raises when the adapter does not answer."""


@attrs.frozen
class Check:
    """One line of `ragline doctor`."""

    part: str
    adapter: str
    ok: bool
    detail: str
    advice: str = ""


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
        seen = await probe()
    except Exception as error:  # doctor reports every failure instead of stopping
        return Check(part, adapter, False, describe(error))
    if isinstance(seen, Observed):
        return Check(part, adapter, True, seen.detail, seen.advice)
    return Check(part, adapter, True, seen)


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
    advise_scan_above: int = EXACT_SCAN_ADVICE_POINTS,
) -> list[NamedProbe]:
    """The six checks of `ragline doctor`; `labels` names each part's adapter. An exact-scan
    vector index with a scope of more than `advise_scan_above` points gets advice."""

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

    async def vector_index() -> Observed:
        index = await obtain(vectors)
        hits = await index.query_sparse("doctor", "doctor", SparseVector([1], [1.0]), 1)
        detail = f"search answered ({len(hits)} hits)"
        if not isinstance(index, ScopeSizes):
            return Observed(detail)
        largest = await index.largest_scope()
        detail += f"; largest scope {largest:,} points"
        if largest <= advise_scan_above:
            return Observed(detail)
        return Observed(
            detail,
            f"the largest scope holds {largest:,} points, more than {advise_scan_above:,}:"
            " past that this exact-scan index answers slower than 100 ms (p95); set"
            " RAGLINE_VECTOR_INDEX=pgvector or qdrant (docs/operations.md, sizing)",
        )

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
