"""`ragline ingest --force` over a folder (issue 24 item 2): the old version of each document
leaves each index in ONE call at its lineage swap, not one per chunk or file stage (the
keyword index's is a retire, which rides its next commit); nothing of the first ingest is
left once the index is closed. The constant embedder keeps the model out of it; the
first and the forced wall times are printed (figures, not assertions: no timed asserts).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from dependency_injector import providers

from ragline.adapters.inbound.cli.walk import find_sources
from ragline.application.health import obtain
from ragline.application.ingest.identity import identify
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.bootstrap import factories
from ragline.bootstrap.container import Container, container_for
from ragline.bootstrap.entry import shut_down
from ragline.bootstrap.settings import Settings
from ragline.testing.services.constant_embedder import ConstantResolver

USER, DATASET = "1", "1"
FILES = 12
WORDS = ["press", "type", "ink", "paper", "guild", "scribe", "vellum", "folio", "quarto", "binding"]


class Counting:
    """The real index, counting its delete and retire calls by method."""

    def __init__(self, inner: Any, name: str, calls: Counter[str]) -> None:
        self._inner, self._name, self._calls = inner, name, calls

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if not attr.startswith(("delete", "retire")) or not callable(value):
            return value
        name = f"{self._name}.{attr}"

        def counted(*args: Any, **kwargs: Any) -> Any:  # a call, not a look (isinstance)
            self._calls[name] += 1
            return value(*args, **kwargs)

        return counted


async def _counted_vectors(settings: Settings, calls: Counter[str]) -> AsyncIterator[Any]:
    async for index in factories.vector_index(settings):
        yield Counting(index, "vectors", calls)


async def _counted_keywords(settings: Settings, calls: Counter[str]) -> AsyncIterator[Any]:
    async for index in factories.keyword_index(settings):
        yield Counting(index, "keywords", calls)


def _folder(root: Path) -> Path:
    root.mkdir()
    for n in range(FILES):
        sections = []
        for s in range(8):
            body = " ".join(WORDS[(n + s + i) % len(WORDS)] for i in range(400))
            sections.append(f"## Section {s} of file {n}\n\n{body}.\n")
        (root / f"doc-{n:02d}.md").write_text(f"# File {n}\n\n" + "\n".join(sections))
    return root


def _container(data_dir: Path, calls: Counter[str]) -> Container:
    container = container_for(data_dir)
    container.embedders.override(providers.Object(ConstantResolver()))
    counted = providers.Object(calls)
    container.vectors.override(providers.Resource(_counted_vectors, container.settings, counted))
    container.keywords.override(providers.Resource(_counted_keywords, container.settings, counted))
    return container


async def _ingest(container: Container, paths: Sequence[Path], *, force: bool) -> float:
    started = time.perf_counter()
    await (await obtain(container.provision_embedding))(USER)
    ingest_files = await obtain(container.ingest_files)
    async with (await obtain(container.worker)).running():
        summary = await ingest_files(
            find_sources(list(paths)), USER, DATASET, _Quiet(), force=force
        )
    assert not summary.failed, [o.failure_reason for o in summary.failed]
    return time.perf_counter() - started


class _Quiet:
    def file_submitted(self, *args: object) -> None:
        pass

    def stage_changed(self, *args: object) -> None:
        pass

    def file_finished(self, *args: object) -> None:
        pass


async def _child_ids(container: Container, paths: Sequence[Path]) -> set[str]:
    ids: set[str] = set()
    async with (await obtain(container.uow_factory))() as uow:
        for source in find_sources(list(paths)):
            doc = str(identify(source, USER, DATASET).original_file_id)
            rows = await uow.chunks.list_document(DocumentScope(USER, DATASET, doc))
            ids |= {r.chunk_id for r in rows if not r.is_parent}
    return ids


async def test_a_forced_reingest_deletes_once_per_index_per_document(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "docs")
    calls: Counter[str] = Counter()
    container = _container(tmp_path / "data", calls)
    try:
        first = await _ingest(container, [folder], force=False)
        assert calls == Counter()  # a first ingest deletes nothing
        before = await _child_ids(container, [folder])
        forced = await _ingest(container, [folder], force=True)
        after = await _child_ids(container, [folder])
    finally:
        await shut_down(container)  # closing the keyword index commits the last retire
    reopened = container_for(tmp_path / "data")
    try:
        keywords = await obtain(reopened.keywords)
        left = {h.chunk_id for h in await keywords.search(USER, DATASET, WORDS, 10_000)} & before
    finally:
        await shut_down(reopened)
    assert calls == Counter({"vectors.delete_chunks": FILES, "keywords.retire_chunks": FILES})
    assert before and after and not before & after  # every document a new lineage
    assert left == set()
    print(
        f"\n{FILES} files, {len(before)} children: first {first:.2f} s, --force {forced:.2f} s "
        f"({forced / first:.2f}x); deletes {dict(calls)}"
    )
