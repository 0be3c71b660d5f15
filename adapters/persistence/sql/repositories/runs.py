"""parse_run: the ParseRun aggregate, one row per run, one column group per stage.

Every write after the insert is a compare-and-set: `save` on (task_id, version),
`mark_superseded` on (superseded_by_task_id IS NULL, pipeline_status = FAILED), and both
bump `version`, so the row always changes and a stale aggregate cannot overwrite it.

`add`, `get` and `save` run for every task (the last two on every stage transition): their
statements are built once, with bound parameters, so SQLAlchemy neither rebuilds them nor
recomputes their cache keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    bindparam,
    func,
    select,
    true,
    update,
)

from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors, unique_task_id
from ragline.adapters.persistence.sql.tables import parse_run, stage_prefix
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.repositories.runs import RunPage, RunQuery
from ragline.domain.parse_run import (
    STAGE_ORDER,
    FailurePoint,
    FailureReason,
    MarkdownLocation,
    ParseRun,
    PipelineStatus,
    Stage,
    StageState,
    StageStatus,
    TaskIdentity,
)

UNFINISHED = (PipelineStatus.PENDING.value, PipelineStatus.PROCESSING.value)
PASSTHROUGH = ("md", "markdown")  # application.pipeline.context.MARKDOWN_PASSTHROUGH_TYPES
IN_USE_CHUNK = 50  # objects asked about per statement (each is one OR-ed pair of equalities)


def _state_columns(run: ParseRun) -> dict[str, Any]:
    """Every column but the identity (which never changes after the insert)."""
    values: dict[str, Any] = {}
    for stage, state in run.stages_in_order():
        prefix = stage_prefix(stage)
        values[f"{prefix}_status"] = state.status.value
        values[f"{prefix}_started_at"] = state.started_at
        values[f"{prefix}_finished_at"] = state.finished_at
        values[f"{prefix}_duration_ms"] = state.duration_ms
        values[f"{prefix}_inherited"] = state.inherited
    markdown = run.markdown
    values.update(
        pipeline_status=run.pipeline_status.value,
        failed_stage=None if run.failed_stage is None else run.failed_stage.value,
        recover_from_stage=None if run.recover_from_stage is None else run.recover_from_stage.value,
        failure_reason=None if run.failure_reason is None else run.failure_reason.text,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        superseded_by_task_id=run.superseded_by_task_id,
        retry_of_task_id=run.retry_of_task_id,
        markdown_bucket=None if markdown is None else markdown.bucket,
        markdown_object_key=None if markdown is None else markdown.object_key,
        version=run.version,
    )
    return values


_IDENTITY_COLUMNS = frozenset(
    {"id", "task_id", "original_file_id", "document_parse_task_id", "user_id", "dataset_id"}
    | {"file_type"}
)
_OUTSIDE_THE_AGGREGATE = frozenset({"document_deleted_at", "heartbeat_at"})
_STATE_COLUMN_NAMES = tuple(
    c.name
    for c in parse_run.columns
    if c.name not in _IDENTITY_COLUMNS and c.name not in _OUTSIDE_THE_AGGREGATE
)

_ADD = parse_run.insert()  # the values come as parameters: every column of the row

_GET = select(parse_run).where(
    parse_run.c.task_id == bindparam("match_task_id", type_=parse_run.c.task_id.type)
)

# SET every state column from `set_<name>`; WHERE task_id and the expected version.
_SAVE = (
    update(parse_run)
    .where(parse_run.c.task_id == bindparam("match_task_id", type_=parse_run.c.task_id.type))
    .where(parse_run.c.version == bindparam("expected_version", type_=parse_run.c.version.type))
    .values(
        {
            name: bindparam(f"set_{name}", type_=parse_run.c[name].type)
            for name in _STATE_COLUMN_NAMES
        }
    )
)


_LAST_SIGN_OF_LIFE = func.coalesce(parse_run.c.heartbeat_at, parse_run.c.created_at)
_BEFORE = bindparam("before", type_=parse_run.c.created_at.type)
_HEARTBEAT = (
    update(parse_run)
    .where(parse_run.c.task_id == bindparam("match_task_id", type_=parse_run.c.task_id.type))
    .where(parse_run.c.pipeline_status.in_(UNFINISHED))
    .values(heartbeat_at=bindparam("set_heartbeat_at", type_=parse_run.c.heartbeat_at.type))
)
_CLAIM_STALE = _HEARTBEAT.where(_LAST_SIGN_OF_LIFE < _BEFORE)


def run_to_row(run: ParseRun) -> dict[str, Any]:
    """The full row of a run."""
    identity = run.identity
    return {
        "task_id": identity.task_id,
        "original_file_id": identity.original_file_id,
        "document_parse_task_id": identity.document_parse_task_id,
        "user_id": identity.user_id,
        "dataset_id": identity.dataset_id,
        "file_type": identity.file_type,
        **_state_columns(run),
    }


def _stage_state(m: Mapping[Any, Any], stage: Stage) -> StageState:
    prefix = stage_prefix(stage)
    duration = m[f"{prefix}_duration_ms"]
    return StageState(
        status=StageStatus(m[f"{prefix}_status"]),
        started_at=m[f"{prefix}_started_at"],
        finished_at=m[f"{prefix}_finished_at"],
        duration_ms=None if duration is None else int(duration),
        inherited=bool(m[f"{prefix}_inherited"]),
    )


def row_to_run(m: Mapping[Any, Any]) -> ParseRun:
    """The aggregate rebuilt from its row with the plain attrs init (no pending events)."""
    bucket, key = m["markdown_bucket"], m["markdown_object_key"]
    return ParseRun(
        identity=TaskIdentity(
            task_id=m["task_id"],
            original_file_id=m["original_file_id"],
            document_parse_task_id=m["document_parse_task_id"],
            user_id=m["user_id"],
            dataset_id=m["dataset_id"],
            file_type=m["file_type"],
        ),
        created_at=m["created_at"],
        stages={stage: _stage_state(m, stage) for stage in STAGE_ORDER},
        pipeline_status=PipelineStatus(m["pipeline_status"]),
        failed_stage=None if m["failed_stage"] is None else FailurePoint(m["failed_stage"]),
        recover_from_stage=(
            None if m["recover_from_stage"] is None else Stage(m["recover_from_stage"])
        ),
        failure_reason=(
            None if m["failure_reason"] is None else FailureReason.parse(m["failure_reason"])
        ),
        started_at=m["started_at"],
        finished_at=m["finished_at"],
        markdown=None if bucket is None or key is None else MarkdownLocation(bucket, key),
        superseded_by_task_id=m["superseded_by_task_id"],
        retry_of_task_id=m["retry_of_task_id"],
        version=int(m["version"]),
    )


def rows_to_runs(rows: list[Row[Any]]) -> list[ParseRun]:
    return [row_to_run(row._mapping) for row in rows]


class SqlParseRunRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot
        self.seen: list[ParseRun] = []  # added or saved since the last commit (their events)

    def _saw(self, run: ParseRun) -> None:
        if all(seen is not run for seen in self.seen):
            self.seen.append(run)

    async def add(self, run: ParseRun) -> None:
        conn = self._slot.conn
        with store_errors("parse_run add"), unique_task_id(run.task_id):
            async with conn.begin_nested():  # a duplicate leaves the transaction usable
                await conn.execute(_ADD, run_to_row(run))
        self._saw(run)

    async def get(self, task_id: str) -> ParseRun | None:
        with store_errors("parse_run get"):
            result = await self._slot.conn.execute(_GET, {"match_task_id": task_id})
            row = result.first()
        return None if row is None else row_to_run(row._mapping)

    async def save(self, run: ParseRun, expected_version: int) -> None:
        if run.version <= expected_version:
            raise ValueError(
                f"run {run.task_id} version {run.version} is not newer than {expected_version}"
            )
        params = {f"set_{name}": value for name, value in _state_columns(run).items()}
        params["match_task_id"] = run.task_id
        params["expected_version"] = expected_version
        with store_errors("parse_run save"):
            result = await self._slot.conn.execute(_SAVE, params)
        if result.rowcount != 1:
            raise ConcurrentUpdate(
                f"run {run.task_id} is no longer at version {expected_version} (or is gone)"
            )
        self._saw(run)

    async def mark_superseded(self, task_id: str, by_task_id: str) -> bool:
        with store_errors("parse_run mark_superseded"):
            result = await self._slot.conn.execute(
                update(parse_run)
                .where(parse_run.c.task_id == task_id)
                .where(parse_run.c.superseded_by_task_id.is_(None))
                .where(parse_run.c.pipeline_status == PipelineStatus.FAILED.value)
                .values(superseded_by_task_id=by_task_id, version=parse_run.c.version + 1)
            )
        return result.rowcount == 1

    async def list_unfinished(self, limit: int = 100) -> list[ParseRun]:
        with store_errors("parse_run list_unfinished"):
            result = await self._slot.conn.execute(
                select(parse_run)
                .where(parse_run.c.pipeline_status.in_(UNFINISHED))
                .order_by(parse_run.c.created_at, parse_run.c.id)
                .limit(limit)
            )
            rows = list(result.all())
        return rows_to_runs(rows)

    async def heartbeat(self, task_id: str, at: datetime) -> bool:
        with store_errors("parse_run heartbeat"):
            result = await self._slot.conn.execute(
                _HEARTBEAT, {"match_task_id": task_id, "set_heartbeat_at": at}
            )
        return result.rowcount == 1

    async def list_stale(self, before: datetime, limit: int = 100) -> list[str]:
        with store_errors("parse_run list_stale"):
            result = await self._slot.conn.execute(
                select(parse_run.c.task_id)
                .where(parse_run.c.pipeline_status.in_(UNFINISHED))
                .where(_LAST_SIGN_OF_LIFE < _BEFORE)
                .order_by(_LAST_SIGN_OF_LIFE, parse_run.c.id)
                .limit(limit),
                {"before": before},
            )
            return [str(row[0]) for row in result.all()]

    async def claim_stale(self, task_id: str, before: datetime, at: datetime) -> bool:
        params = {"match_task_id": task_id, "set_heartbeat_at": at, "before": before}
        with store_errors("parse_run claim_stale"):
            result = await self._slot.conn.execute(_CLAIM_STALE, params)
        return result.rowcount == 1

    async def list_recent(self, limit: int = 50) -> list[ParseRun]:
        with store_errors("parse_run list_recent"):
            result = await self._slot.conn.execute(
                select(parse_run)
                .order_by(parse_run.c.created_at.desc(), parse_run.c.id.desc())
                .limit(limit)
            )
            rows = list(result.all())
        return rows_to_runs(rows)

    async def list_page(self, query: RunQuery, *, offset: int = 0, limit: int = 50) -> RunPage:
        where = _matching(query)
        with store_errors("parse_run list_page"):
            total = await self._slot.conn.execute(
                select(func.count()).select_from(parse_run).where(where)
            )
            count = int(total.scalar_one())
            result = await self._slot.conn.execute(
                select(parse_run)
                .where(where)
                .order_by(parse_run.c.created_at.desc(), parse_run.c.id.desc())
                .offset(offset)
                .limit(limit)
            )
            rows = list(result.all())
        return RunPage(rows_to_runs(rows), count)


def _matching(query: RunQuery) -> ColumnElement[bool]:
    where: ColumnElement[bool] = true()
    if query.user_id is not None:
        where = where & (parse_run.c.user_id == query.user_id)
    if query.dataset_id is not None:
        where = where & (parse_run.c.dataset_id == query.dataset_id)
    if query.status is not None:
        where = where & (parse_run.c.pipeline_status == query.status.value)
    if query.doc_id is not None:
        where = where & (parse_run.c.original_file_id == query.doc_id)
    return where
