"""A chunk row <-> ChunkRecord, read by column position (the hot path of every indexing
stage's page of children); the table's column order is checked at import."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ragline.adapters.persistence.sql.tables import chunk
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import ChunkIndexStatus

_STATUSES = {status.value: status for status in ChunkIndexStatus}


def _status(value: str | None) -> ChunkIndexStatus | None:
    if value is None:
        return None
    return _STATUSES.get(value) or ChunkIndexStatus(value)  # unknown: ValueError as before


def chunk_to_row(record: ChunkRecord) -> dict[str, Any]:
    return {
        "user_id": record.scope.user_id,
        "dataset_id": record.scope.dataset_id,
        "doc_id": record.scope.doc_id,
        "chunk_id": record.chunk_id,
        "task_id": record.task_id,
        "parent_id": record.parent_id,
        "order_index": record.order_index,
        "text": record.text,
        "section_path": json.dumps(list(record.section_path), ensure_ascii=False),
        "canonical_path": record.canonical_path,
        "structure_node_id": record.structure_node_id,
        "node_type": record.node_type,
        "source_type": record.source_type,
        "span_start": record.span_start,
        "span_end": record.span_end,
        "dense_status": None if record.dense_status is None else record.dense_status.value,
        "sparse_status": None if record.sparse_status is None else record.sparse_status.value,
        "enabled": record.enabled,
        "edited": record.edited,
        "live": record.live,
    }


def rows_to_chunks(rows: Iterable[Sequence[Any]]) -> list[ChunkRecord]:
    """ChunkRecords from rows of `select(chunk)` (table column order), read by position: a
    page of children shares its scope and most section paths, so each distinct one is built
    (or decoded) once per call."""
    (chunk_id, user_id, dataset_id, doc_id, task_id, parent_id, order_index, text) = range(8)
    (section_path, canonical_path, node_id, node_type, source_type) = range(8, 13)
    (span_start, span_end, dense, sparse, enabled, edited, live) = range(13, 20)
    scopes: dict[tuple[str, str, str], DocumentScope] = {}
    paths: dict[str, tuple[str, ...]] = {}
    records = []
    for row in rows:
        key = (row[user_id], row[dataset_id], row[doc_id])
        scope = scopes.get(key)
        if scope is None:
            scope = scopes[key] = DocumentScope(*key)
        raw_path = row[section_path]
        path = paths.get(raw_path)
        if path is None:
            path = paths[raw_path] = tuple(json.loads(raw_path))
        records.append(
            ChunkRecord(
                chunk_id=row[chunk_id],
                scope=scope,
                task_id=row[task_id],
                parent_id=row[parent_id],
                order_index=int(row[order_index]),
                text=row[text],
                section_path=path,
                canonical_path=row[canonical_path],
                structure_node_id=row[node_id],
                node_type=row[node_type],
                source_type=row[source_type],
                span_start=int(row[span_start]),
                span_end=int(row[span_end]),
                dense_status=_status(row[dense]),
                sparse_status=_status(row[sparse]),
                enabled=bool(row[enabled]),
                edited=bool(row[edited]),
                live=bool(row[live]),
            )
        )
    return records


_COLUMN_ORDER = (
    "chunk_id",
    "user_id",
    "dataset_id",
    "doc_id",
    "task_id",
    "parent_id",
    "order_index",
    "text",
    "section_path",
    "canonical_path",
    "structure_node_id",
    "node_type",
    "source_type",
    "span_start",
    "span_end",
    "dense_status",
    "sparse_status",
    "enabled",
    "edited",
    "live",
)
if tuple(c.name for c in chunk.columns) != _COLUMN_ORDER:  # not an assert: kept under -O
    raise RuntimeError("rows_to_chunks reads by position: the chunk columns changed order")
