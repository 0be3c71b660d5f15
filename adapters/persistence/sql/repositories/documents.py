"""The documents view on parse_run: a dataset's documents through their newest runs, the
deletion mark (a compare-and-set on `document_deleted_at IS NULL`), and which stored objects
a live document still names; each document's metadata (a compare-and-set on `version`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, false, func, not_, or_, select, true, update
from sqlalchemy.exc import IntegrityError

from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.repositories.runs import row_to_run, rows_to_runs
from ragline.adapters.persistence.sql.tables import (
    document_metadata,
    parse_run,
    parsed_log,
    stage_prefix,
)
from ragline.application.ports.repositories.documents import DocumentPage, StoredMetadata
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import MarkdownLocation, ParseRun, PipelineStatus, Stage, StageStatus

PASSTHROUGH = ("md", "markdown")  # application.pipeline.context.MARKDOWN_PASSTHROUGH_TYPES
IN_USE_CHUNK = 50  # objects asked about per statement (each is one OR-ed pair of equalities)


_METADATA_OF = select(document_metadata.c.metadata_json, document_metadata.c.version).where(
    document_metadata.c.user_id == bindparam("b_user_id", type_=document_metadata.c.user_id.type),
    document_metadata.c.dataset_id
    == bindparam("b_dataset_id", type_=document_metadata.c.dataset_id.type),
    document_metadata.c.doc_id == bindparam("b_doc_id", type_=document_metadata.c.doc_id.type),
)
"""Read by every indexing stage and its catch-up (four times a file): built once, so
SQLAlchemy neither rebuilds it nor recomputes its cache key per call."""


class SqlDocumentRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot

    @staticmethod
    def _document(scope: DocumentScope) -> ColumnElement[bool]:
        return and_(
            document_metadata.c.user_id == scope.user_id,
            document_metadata.c.dataset_id == scope.dataset_id,
            document_metadata.c.doc_id == scope.doc_id,
        )

    async def metadata_of(self, scope: DocumentScope) -> StoredMetadata | None:
        with store_errors("document_metadata get"):
            result = await self._slot.conn.execute(
                _METADATA_OF,
                {
                    "b_user_id": scope.user_id,
                    "b_dataset_id": scope.dataset_id,
                    "b_doc_id": scope.doc_id,
                },
            )
            row = result.first()
        if row is None:
            return None
        values = row._mapping
        plain = json.loads(values["metadata_json"])
        return StoredMetadata(DocumentMetadata.from_plain(plain), int(values["version"]))

    async def put_metadata(
        self, scope: DocumentScope, metadata: DocumentMetadata, *, expected_version: int
    ) -> int:
        text = json.dumps(metadata.as_plain(), ensure_ascii=False, separators=(",", ":"))
        now = datetime.now(UTC)
        conn = self._slot.conn
        with store_errors("document_metadata put"):
            if expected_version == 0:
                try:
                    async with conn.begin_nested():
                        await conn.execute(
                            document_metadata.insert().values(
                                user_id=scope.user_id,
                                dataset_id=scope.dataset_id,
                                doc_id=scope.doc_id,
                                metadata_json=text,
                                version=1,
                                updated_at=now,
                            )
                        )
                except IntegrityError:
                    return 0  # a row exists: someone wrote first
                return 1
            result = await conn.execute(
                update(document_metadata)
                .where(self._document(scope))
                .where(document_metadata.c.version == expected_version)
                .values(metadata_json=text, version=expected_version + 1, updated_at=now)
            )
        return int(result.rowcount)

    async def latest_per_document(
        self, user_id: str, dataset_id: str, *, offset: int = 0, limit: int = 50
    ) -> DocumentPage:
        in_dataset = (parse_run.c.user_id == user_id) & (parse_run.c.dataset_id == dataset_id)
        newest = (
            select(func.max(parse_run.c.id).label("id"))
            .where(in_dataset)
            .group_by(parse_run.c.original_file_id)
            .subquery()
        )
        live = parse_run.c.document_deleted_at.is_(None)
        with store_errors("parse_run latest_per_document"):
            total = await self._slot.conn.execute(
                select(func.count())
                .select_from(parse_run)
                .join(newest, parse_run.c.id == newest.c.id)
                .where(live)
            )
            count = int(total.scalar_one())
            result = await self._slot.conn.execute(
                select(parse_run)
                .join(newest, parse_run.c.id == newest.c.id)
                .where(live)
                .order_by(parse_run.c.original_file_id)
                .offset(offset)
                .limit(limit)
            )
            rows = list(result.all())
        runs = rows_to_runs(rows)
        return DocumentPage([(run.identity.original_file_id, run) for run in runs], count)

    async def latest_for_document(
        self, user_id: str, dataset_id: str, doc_id: str
    ) -> ParseRun | None:
        with store_errors("parse_run latest_for_document"):
            result = await self._slot.conn.execute(
                select(parse_run)
                .where(parse_run.c.user_id == user_id)
                .where(parse_run.c.dataset_id == dataset_id)
                .where(parse_run.c.original_file_id == doc_id)
                .order_by(parse_run.c.id.desc())
                .limit(1)
            )
            row = result.first()
        if row is None or row._mapping["document_deleted_at"] is not None:
            return None
        return row_to_run(row._mapping)

    async def index_owners(
        self, user_id: str, dataset_id: str, doc_ids: Sequence[str]
    ) -> dict[str, ParseRun]:
        wanted = list(dict.fromkeys(doc_ids))
        chunking = parse_run.c[f"{stage_prefix(Stage.CHUNKING)}_status"]
        owners: dict[str, ParseRun] = {}
        succeeded = parse_run.c.pipeline_status == PipelineStatus.SUCCESS.value
        with store_errors("parse_run index_owners"):
            # the live lineage's run first; a document without one: its newest that chunked
            for only_success in (True, False):
                missing = [d for d in wanted if d not in owners]
                for start in range(0, len(missing), IN_USE_CHUNK):
                    newest = (
                        select(func.max(parse_run.c.id).label("id"))
                        .where(parse_run.c.user_id == user_id)
                        .where(parse_run.c.dataset_id == dataset_id)
                        .where(
                            parse_run.c.original_file_id.in_(missing[start : start + IN_USE_CHUNK])
                        )
                        .where(chunking != StageStatus.PENDING.value)
                        .where(succeeded if only_success else true())
                        .where(parse_run.c.document_deleted_at.is_(None))
                        .group_by(parse_run.c.original_file_id)
                        .subquery()
                    )
                    result = await self._slot.conn.execute(
                        select(parse_run).join(newest, parse_run.c.id == newest.c.id)
                    )
                    for run in rows_to_runs(list(result.all())):
                        owners[run.identity.original_file_id] = run
        return owners

    async def mark_document_deleted(
        self, user_id: str, dataset_id: str, doc_id: str, at: datetime
    ) -> int:
        with store_errors("parse_run mark_document_deleted"):
            result = await self._slot.conn.execute(
                update(parse_run)
                .where(
                    and_(
                        parse_run.c.user_id == user_id,
                        parse_run.c.dataset_id == dataset_id,
                        parse_run.c.original_file_id == doc_id,
                        parse_run.c.document_deleted_at.is_(None),
                    )
                )
                .values(document_deleted_at=at)
            )
        return int(result.rowcount)

    async def objects_in_use(
        self, objects: Sequence[MarkdownLocation], besides: DocumentScope
    ) -> set[MarkdownLocation]:
        wanted = list(dict.fromkeys(objects))
        found: set[MarkdownLocation] = set()
        with store_errors("parse_run objects_in_use"):
            for start in range(0, len(wanted), IN_USE_CHUNK):
                chunk = wanted[start : start + IN_USE_CHUNK]
                result = await self._slot.conn.execute(_in_use(chunk, besides))
                for row in result.all():
                    m = row._mapping
                    if m["same_document"]:  # only a converting run's source counts
                        named = [(m["source_bucket"], m["source_object_key"])]
                    else:
                        named = [
                            (m["source_bucket"], m["source_object_key"]),
                            (m["markdown_bucket"], m["markdown_object_key"]),
                        ]
                    found.update(
                        MarkdownLocation(b, k) for b, k in named if MarkdownLocation(b, k) in chunk
                    )
        return found


def _names(bucket: Any, key: Any, objects: Sequence[MarkdownLocation]) -> ColumnElement[bool]:
    return or_(false(), *((bucket == o.bucket) & (key == o.object_key) for o in objects))


def _in_use(objects: Sequence[MarkdownLocation], besides: DocumentScope) -> Any:
    """The runs naming any of `objects` as objects_in_use counts them, with both names."""
    same_document = and_(
        parse_run.c.user_id == besides.user_id,
        parse_run.c.dataset_id == besides.dataset_id,
        parse_run.c.original_file_id == besides.doc_id,
    )
    as_source = _names(parsed_log.c.source_bucket, parsed_log.c.source_object_key, objects)
    as_markdown = _names(parse_run.c.markdown_bucket, parse_run.c.markdown_object_key, objects)
    elsewhere = not_(same_document) & parse_run.c.document_deleted_at.is_(None)
    converting = same_document & func.lower(parse_run.c.file_type).not_in(PASSTHROUGH)
    return (
        select(
            same_document.label("same_document"),
            parsed_log.c.source_bucket,
            parsed_log.c.source_object_key,
            parse_run.c.markdown_bucket,
            parse_run.c.markdown_object_key,
        )
        .select_from(parse_run.outerjoin(parsed_log, parsed_log.c.task_id == parse_run.c.task_id))
        .where((elsewhere & (as_source | as_markdown)) | (converting & as_source))
    )
