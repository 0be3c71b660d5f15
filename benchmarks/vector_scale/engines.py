"""The VectorIndex adapters the scale benchmark opens, each with its disk and RSS probes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from ragline.application.ports.vector_index import VectorIndex

NAMES = ("embedded", "qdrant-local", "pgvector")


def files_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


@attrs.define
class Engine:
    index: VectorIndex
    directory: Path
    settings: dict[str, Any] = attrs.field(factory=dict)
    server_pids: list[int] = attrs.field(factory=list)

    async def disk_mb(self) -> float:
        return files_mb(self.directory)

    def server_rss_mb(self) -> float | None:
        if not self.server_pids:
            return None
        total = 0.0
        for pid in self.server_pids:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                continue
        return round(total, 1)


@asynccontextmanager
async def opened(name: str, directory: Path) -> AsyncIterator[Engine]:
    directory.mkdir(parents=True)
    if name == "embedded":
        from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex

        engine = Engine(EmbeddedVectorIndex(directory), directory)
    elif name == "qdrant-local":
        from ragline.adapters.vector_index.qdrant import QdrantVectorIndex

        engine = Engine(QdrantVectorIndex("bench", path=str(directory)), directory)
    else:
        raise SystemExit("pgvector: not merged yet")
    try:
        yield engine
    finally:
        await engine.index.close()
