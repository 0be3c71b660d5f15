"""Chunk truth-row throughput of the SQL adapter:
`.venv/bin/python -m benchmarks.sql_chunks [--rows N] [--repeat R] [--backends sqlite,...]`.

For each backend, on a fresh migrated database: `replace_document` of N child chunks
(~600 characters of mixed Chinese/English each) in one unit of work, then `list_document`,
then a `move_dense` BEGIN_INDEXING of all of them. Reports the best and median round in
rows/s. Writes benchmarks/results/sql_chunks.json and prints a table. PostgreSQL and
MariaDB use temporary databases on the loopback servers (dropped afterwards).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
import pymysql

from ragline.adapters.persistence.sql import create_unit_of_work_factory, upgrade_to_head
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import BEGIN_INDEXING, ChunkIndexStatus

RESULTS = Path(__file__).resolve().parents[1] / "results" / "sql_chunks.json"
TEXT = ("检索增强生成把文档切成父子块，子块用于向量检索。" * 10 + "Hybrid search, BM25. ") * 2


def _records(where: DocumentScope, rows: int) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            chunk_id=f"{where.doc_id}-{i:07d}",
            scope=where,
            task_id="bench",
            parent_id=f"{where.doc_id}-parent-{i // 20}",
            order_index=i,
            text=TEXT[: 500 + i % 100],
            section_path=("文档", f"第{i // 200}章", f"{i // 20}"),
            canonical_path=f"/文档/第{i // 200}章/{i // 20}",
            structure_node_id=None,
            node_type="paragraph",
            source_type="markdown",
            span_start=i * 600,
            span_end=i * 600 + 599,
            dense_status=ChunkIndexStatus.PENDING,
            sparse_status=ChunkIndexStatus.PENDING,
        )
        for i in range(rows)
    ]


async def _timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def _bench(url: str, rows: int, repeat: int) -> dict[str, Any]:
    factory = create_unit_of_work_factory(url)
    timings: dict[str, list[float]] = {"replace": [], "list": [], "move_dense": []}
    try:
        for round_ in range(repeat):
            where = DocumentScope("bench-user", "bench-ds", f"doc-{round_}")
            records = _records(where, rows)

            async def replace(
                where: DocumentScope = where, records: list[ChunkRecord] = records
            ) -> None:
                async with factory() as uow:
                    await uow.chunks.replace_document(where, records)
                    await uow.commit()

            async def read(where: DocumentScope = where) -> None:
                async with factory() as uow:
                    got = await uow.chunks.list_document(where)
                    assert len(got) == rows

            async def move(
                where: DocumentScope = where, records: list[ChunkRecord] = records
            ) -> None:
                async with factory() as uow:
                    moved = await uow.chunks.move_dense(
                        where, [r.chunk_id for r in records], BEGIN_INDEXING
                    )
                    assert moved == rows
                    await uow.commit()

            timings["replace"].append(await _timed(replace))
            timings["list"].append(await _timed(read))
            timings["move_dense"].append(await _timed(move))
    finally:
        await factory.dispose()
    return {
        name: {
            "best_rows_per_s": round(rows / min(values)),
            "median_rows_per_s": round(rows / statistics.median(values)),
            "seconds": [round(v, 4) for v in values],
        }
        for name, values in timings.items()
    }


def _postgres() -> tuple[str, Callable[[], None]]:
    name = f"ragline_bench_{uuid.uuid4().hex[:10]}"
    admin = "host=127.0.0.1 user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"postgresql://postgres@127.0.0.1:5432/{name}", drop


def _mariadb() -> tuple[str, Callable[[], None]]:
    name = f"ragline_bench_{uuid.uuid4().hex[:10]}"
    conn = pymysql.connect(host="127.0.0.1", user="root", password="")
    with conn.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    conn.close()

    def drop() -> None:
        conn = pymysql.connect(host="127.0.0.1", user="root", password="")
        with conn.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()

    return f"mysql://root@127.0.0.1:3306/{name}", drop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgresql,mariadb")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if backend == "sqlite":
                url, drop = f"sqlite:///{Path(tmp) / 'bench.db'}", (lambda: None)
            elif backend == "postgresql":
                url, drop = _postgres()
            else:
                url, drop = _mariadb()
            try:
                upgrade_to_head(url)
                results[backend] = asyncio.run(_bench(url, args.rows, args.repeat))
            finally:
                drop()
    report = {
        "benchmark": "sql_chunks",
        "rows_per_round": args.rows,
        "repeat": args.repeat,
        "chars_per_row": "500-599",
        "machine": {"python": platform.python_version(), "cpu_count": __import__("os").cpu_count()},
        "note": "shared 2-core machine; other work ran at the same time",
        "results": results,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"{'backend':<12}{'operation':<12}{'best rows/s':>14}{'median rows/s':>16}")
    for backend, ops in results.items():
        for name, figures in ops.items():
            print(
                f"{backend:<12}{name:<12}{figures['best_rows_per_s']:>14,}"
                f"{figures['median_rows_per_s']:>16,}"
            )
    print(f"written: {RESULTS}")


if __name__ == "__main__":
    main()
