"""ragline ingest in-process, as `ragline ingest` runs it: the container's use cases with a
worker alongside (embedded defaults, fresh data dir)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dependency_injector import providers

from ragline.adapters.inbound.cli.walk import find_sources
from ragline.application.health import obtain
from ragline.application.ingest.identity import SourceFile, identify
from ragline.application.ingest.use_case import FileAction, FileOutcome, IngestObserver
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.parse_run import Stage, StageStatus
from ragline.testing.services.constant_embedder import ConstantResolver

USER, DATASET = "1", "1"  # ids are integers on the wire


class QuietObserver:
    def file_submitted(self, source: SourceFile, action: FileAction, task_id: str) -> None:
        pass

    def stage_changed(self, task_id: str, stage: Stage, status: StageStatus) -> None:
        pass

    def file_finished(self, outcome: FileOutcome) -> None:
        pass


async def ingest(
    data_dir: Path,
    paths: Sequence[Path],
    *,
    fake: bool,
    keep_texts: bool = True,
    observer: IngestObserver | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Ingest `paths` into `data_dir`; wall and CPU time, chunk counts, stage times (sums).
    `keep_texts=False` (memory runs) counts the children without loading their texts;
    `observer`: told of every stage change (memory runs read their peaks there); `force`:
    `ragline ingest --force` (every file again, over what an earlier ingest left)."""
    sources = find_sources(list(paths))
    container = container_for(data_dir)
    if fake:
        container.embedders.override(providers.Object(ConstantResolver()))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        await (await obtain(container.provision_embedding))(USER)
        ingest_files = await obtain(container.ingest_files)
        async with (await obtain(container.worker)).running():
            summary = await ingest_files(
                sources, USER, DATASET, observer or QuietObserver(), force=force
            )
    finally:
        await shut_down(container)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    stage_ms: dict[str, int] = defaultdict(int)
    for outcome in summary.outcomes:
        for stage, ms in outcome.stage_ms.items():
            stage_ms[stage.name] += ms
    children, texts = await child_texts(data_dir, sources, keep_texts)
    return {
        "files": len(sources),
        "failed": len(summary.failed),
        "failures": [o.failure_reason for o in summary.failed][:5],
        "chunks_all": sum(o.chunks for o in summary.outcomes),
        "children": children,
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "children_per_s": round(children / wall, 1),
        "stage_ms_sum": dict(stage_ms),
        "_texts": texts,
    }


async def child_texts(
    data_dir: Path, sources: Sequence[SourceFile], keep: bool = True
) -> tuple[int, list[str]]:
    """How many child chunks (parent_id not null) the sources have and, with `keep`, their
    texts in document order; read page by page."""
    container = container_for(data_dir)
    count, texts = 0, []
    try:
        async with (await obtain(container.uow_factory))() as uow:
            for source in sources:
                doc = str(identify(source, USER, DATASET).original_file_id)
                scope, after = DocumentScope(USER, DATASET, doc), -1
                while rows := await uow.chunks.list_children(scope, after_order_index=after):
                    count += len(rows)
                    if keep:
                        texts += [r.text for r in rows]
                    after = rows[-1].order_index
    finally:
        await shut_down(container)
    return count, texts
