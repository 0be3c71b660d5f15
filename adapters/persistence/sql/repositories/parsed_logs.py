"""parsed_log: the task snapshot; its integer id is the `document_parsed_log_id`.

Every task adds, reads and updates its row: the statements are built once, with bound
parameters (SQLAlchemy neither rebuilds them nor recomputes their cache keys per call).
"""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import Row, bindparam, select, update

from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors, unique_task_id
from ragline.adapters.persistence.sql.tables import parsed_log
from ragline.application.ports.repositories.errors import PersistenceError
from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.application.tasks import RejectedBody, StoredTask, stored_task, task_record
from ragline.domain.parse_run import MarkdownLocation

_ADD = parsed_log.insert()  # values as parameters
_GET = select(parsed_log).where(
    parsed_log.c.task_id == bindparam("b_task_id", type_=parsed_log.c.task_id.type)
)
_SET_LOCATION = (
    update(parsed_log)
    .where(parsed_log.c.task_id == bindparam("b_task_id", type_=parsed_log.c.task_id.type))
    .values(
        parsed_bucket=bindparam("b_bucket", type_=parsed_log.c.parsed_bucket.type),
        parsed_object_key=bindparam("b_key", type_=parsed_log.c.parsed_object_key.type),
    )
)
_SET_OUTCOME = (
    update(parsed_log)
    .where(parsed_log.c.task_id == bindparam("b_task_id", type_=parsed_log.c.task_id.type))
    .values(
        parse_backend=bindparam("b_backend", type_=parsed_log.c.parse_backend.type),
        parse_warnings=bindparam("b_warnings", type_=parsed_log.c.parse_warnings.type),
    )
)


def payload_json(task: StoredTask) -> str:
    """The stored task as the `payload_json` column keeps it: canonical JSON (a valid
    task's every field, written as its ParseTask message is; a rejected body's reason and
    start), so the rows written before the task was stored as a value read the same."""
    if isinstance(task, RejectedBody):
        return json.dumps(task_record(task), ensure_ascii=False)
    return json.dumps(task_record(task), ensure_ascii=False, separators=(",", ":"))


def stored_of(text: str) -> StoredTask:
    try:
        record = json.loads(text)
    except ValueError as error:
        return RejectedBody(reason=f"unreadable stored task: {error}", body_text=text[:8192])
    return stored_task(record)


def _warnings(stored: str | None) -> tuple[str, ...]:
    return tuple(json.loads(stored)) if stored else ()


def _to_log(row: Row[tuple[object, ...]]) -> ParsedLog:
    m = row._mapping
    return ParsedLog(
        id=m["id"],
        task_id=m["task_id"],
        task=stored_of(m["payload_json"]),
        created_at=m["created_at"],
        retry_of_task_id=m["retry_of_task_id"],
        parsed_bucket=m["parsed_bucket"],
        parsed_object_key=m["parsed_object_key"],
        parse_backend=m["parse_backend"],
        parse_warnings=_warnings(m["parse_warnings"]),
        source=_location(m["source_bucket"], m["source_object_key"]),
    )


def _location(bucket: str | None, key: str | None) -> MarkdownLocation | None:
    return None if bucket is None or key is None else MarkdownLocation(bucket, key)


class SqlParsedLogRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot

    async def add(
        self,
        task_id: str,
        task: StoredTask,
        created_at: datetime,
        retry_of_task_id: str | None = None,
        source: MarkdownLocation | None = None,
    ) -> ParsedLog:
        conn = self._slot.conn
        with store_errors("parsed_log add"), unique_task_id(task_id):
            async with conn.begin_nested():  # a duplicate leaves the transaction usable
                result = await conn.execute(
                    _ADD,
                    {
                        "task_id": task_id,
                        "payload_json": payload_json(task),
                        "created_at": created_at,
                        "retry_of_task_id": retry_of_task_id,
                        "source_bucket": None if source is None else source.bucket,
                        "source_object_key": None if source is None else source.object_key,
                    },
                )
        key = result.inserted_primary_key
        assert key is not None  # narrows for mypy  # nosec B101
        return ParsedLog(
            id=int(key[0]),
            task_id=task_id,
            task=task,
            created_at=created_at,
            retry_of_task_id=retry_of_task_id,
            source=source,
        )

    async def get(self, task_id: str) -> ParsedLog | None:
        with store_errors("parsed_log get"):
            result = await self._slot.conn.execute(_GET, {"b_task_id": task_id})
            row = result.first()
        return None if row is None else _to_log(row)

    async def set_parsed_location(self, task_id: str, bucket: str, object_key: str) -> None:
        with store_errors("parsed_log set_parsed_location"):
            result = await self._slot.conn.execute(
                _SET_LOCATION, {"b_task_id": task_id, "b_bucket": bucket, "b_key": object_key}
            )
        if result.rowcount != 1:
            raise PersistenceError(f"no parsed log for task_id {task_id!r}")

    async def set_parse_outcome(
        self, task_id: str, backend: str, warnings: tuple[str, ...]
    ) -> None:
        values = {
            "b_task_id": task_id,
            "b_backend": backend[:64],
            "b_warnings": json.dumps(list(warnings), ensure_ascii=False),
        }
        with store_errors("parsed_log set_parse_outcome"):
            result = await self._slot.conn.execute(_SET_OUTCOME, values)
        if result.rowcount != 1:
            raise PersistenceError(f"no parsed log for task_id {task_id!r}")
