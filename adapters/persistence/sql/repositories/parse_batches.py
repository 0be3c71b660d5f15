"""parse_batch: the parse cache's batches; parse_plan_lock: one row per (sha256, tier);
parse_holding: which user holds which bytes.

Every status move is a compare-and-set whose rowcount is checked: a claim matches the
`claims` count it read (and the claimable status), a finish or failure matches the status
parsing, the owner and the claims of the claim that did the work. So two workers never both
win one batch, and a worker whose lease was taken over cannot overwrite its successor.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, bindparam, or_, select, update
from sqlalchemy.dialects import mysql, postgresql, sqlite

from ragline.adapters.persistence.sql.connection import IN_LIST_SLICE, ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.tables import (
    ID_MAX,
    parse_batch,
    parse_holding,
    parse_plan_lock,
)
from ragline.application.ports.repositories.parse_batches import NewParseBatch
from ragline.domain.parse_batch import (
    BatchStatus,
    PageRange,
    ParseBatch,
    ParseTier,
    SourceRef,
)
from ragline.domain.parse_batch.batch import MAX_ERROR_CHARS

PENDING, PARSING = BatchStatus.PENDING.value, BatchStatus.PARSING.value
ACTIVE = (PENDING, PARSING)
CLAIM_CANDIDATES = 8
CLAIM_ROUNDS = 5

c = parse_batch.c


def _to_batch(row: Row[Any]) -> ParseBatch:
    m = row._mapping
    return ParseBatch(
        id=int(m["id"]),
        sha256=m["sha256"],
        tier=ParseTier(m["tier"]),
        page_range=PageRange(int(m["first_page"]), int(m["last_page"])),
        status=BatchStatus(m["status"]),
        priority=int(m["priority"]),
        created_at=m["created_at"],
        source=SourceRef(m["source_bucket"], m["source_key"], m["file_type"]),
        started_at=m["started_at"],
        done_at=m["done_at"],
        error_code=m["error_code"],
        error_msg=m["error_msg"],
        owner=m["owner"],
        lease_until=m["lease_until"],
        claims=int(m["claims"]),
        backend=m["backend"],
        page_count=m["page_count"],
        requested_backend=m["requested_backend"],
        warnings=tuple(json.loads(m["warnings"])) if m["warnings"] else (),
    )


def _lock_insert(dialect: str) -> Any:
    values: dict[str, Any] = {"sha256": bindparam("b_sha256"), "tier": bindparam("b_tier")}
    if dialect == "sqlite":
        return sqlite.insert(parse_plan_lock).values(values).on_conflict_do_nothing()
    if dialect == "postgresql":
        return postgresql.insert(parse_plan_lock).values(values).on_conflict_do_nothing()
    my = mysql.insert(parse_plan_lock).values(values)
    return my.on_duplicate_key_update(tier=my.inserted.tier)


def _holding_insert(dialect: str) -> Any:
    """Insert if absent: a pair added again (or by two units at once) is no error."""
    values: dict[str, Any] = {"user_id": bindparam("b_user"), "sha256": bindparam("b_sha256")}
    if dialect == "sqlite":
        return sqlite.insert(parse_holding).values(values).on_conflict_do_nothing()
    if dialect == "postgresql":
        return postgresql.insert(parse_holding).values(values).on_conflict_do_nothing()
    my = mysql.insert(parse_holding).values(values)
    return my.on_duplicate_key_update(sha256=my.inserted.sha256)


_LOCK_ROW = (
    select(parse_plan_lock.c.sha256)
    .where(parse_plan_lock.c.sha256 == bindparam("b_sha256"))
    .where(parse_plan_lock.c.tier == bindparam("b_tier"))
    .with_for_update()
)
_LIST = (
    select(parse_batch)
    .where(c.sha256 == bindparam("b_sha256"))
    .where(c.tier == bindparam("b_tier"))
    .order_by(c.id)
)
_RAISE = (
    update(parse_batch)
    .where(c.id == bindparam("b_id"))
    .where(c.status.in_(ACTIVE))
    .where(c.priority < bindparam("b_priority"))
    .values(priority=bindparam("b_priority"))
)
_CLAIM = (
    update(parse_batch)
    .where(c.id == bindparam("b_id"))
    .where(c.claims == bindparam("b_claims"))
    .where(
        or_(
            c.status == PENDING,
            and_(
                c.status == PARSING, c.lease_until <= bindparam("b_now", type_=c.lease_until.type)
            ),
        )
    )
    .values(
        status=PARSING,
        owner=bindparam("b_owner"),
        lease_until=bindparam("b_lease_until", type_=c.lease_until.type),
        started_at=bindparam("b_now", type_=c.started_at.type),
        claims=c.claims + 1,
    )
)


def _held() -> Any:
    return (
        update(parse_batch)
        .where(c.id == bindparam("b_id"))
        .where(c.status == PARSING)
        .where(c.owner == bindparam("b_owner"))
        .where(c.claims == bindparam("b_claims"))
    )


_RENEW = _held().values(lease_until=bindparam("b_lease_until", type_=c.lease_until.type))
_FINISH = _held().values(
    status=BatchStatus.DONE.value,
    done_at=bindparam("b_at", type_=c.done_at.type),
    backend=bindparam("b_backend"),
    warnings=bindparam("b_warnings"),
    lease_until=None,
)
_FAIL = _held().values(
    status=BatchStatus.FAILED.value,
    done_at=bindparam("b_at", type_=c.done_at.type),
    error_code=bindparam("b_code"),
    error_msg=bindparam("b_message"),
    lease_until=None,
)
_RELEASE = _held().values(status=PENDING, owner=None, lease_until=None)
_LATEST_SOURCE = (
    select(c.source_bucket, c.source_key, c.file_type)
    .where(c.sha256 == bindparam("b_sha256"))
    .order_by(c.id.desc())
    .limit(1)
)


_BY_TAG = (
    select(parse_batch).where(c.source_tag == bindparam("b_tag")).order_by(c.id.desc()).limit(1)
)


def _claimable(now: datetime, ids: Sequence[int] | None) -> Any:
    query = (
        select(parse_batch)
        .where(
            or_(c.status == PENDING, and_(c.status == PARSING, c.lease_until <= now)),
        )
        .order_by(c.priority.desc(), c.id)
        .limit(CLAIM_CANDIDATES)
    )
    if ids is not None:
        query = query.where(c.id.in_(list(ids)))
    return query


class SqlParseBatchRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot

    async def lock_document(self, sha256: str, tier: ParseTier) -> None:
        conn = self._slot.conn
        params = {"b_sha256": sha256, "b_tier": tier.value}
        with store_errors("parse_plan_lock"):
            await conn.execute(_lock_insert(conn.dialect.name), params)
            await conn.execute(_LOCK_ROW, params)

    async def list_for(self, sha256: str, tier: ParseTier) -> list[ParseBatch]:
        with store_errors("parse_batch list"):
            result = await self._slot.conn.execute(
                _LIST, {"b_sha256": sha256, "b_tier": tier.value}
            )
            return [_to_batch(row) for row in result.all()]

    async def add(self, batch: NewParseBatch) -> ParseBatch:
        row: dict[str, Any] = {
            "sha256": batch.sha256,
            "tier": batch.tier.value,
            "first_page": batch.page_range.first,
            "last_page": batch.page_range.last,
            "status": PENDING,
            "priority": batch.priority,
            "source_bucket": batch.source.bucket,
            "source_key": batch.source.key,
            "file_type": batch.source.file_type,
            "created_at": batch.created_at,
            "claims": 0,
            "page_count": batch.page_count,
            "source_tag": batch.source_tag,
            "requested_backend": batch.requested_backend,
        }
        with store_errors("parse_batch add"):
            result = await self._slot.conn.execute(parse_batch.insert(), row)
        key = result.inserted_primary_key
        if key is None:  # every dialect we run returns the id of a single-row insert
            raise RuntimeError("parse_batch insert returned no primary key")
        return ParseBatch(
            id=int(key[0]),
            sha256=batch.sha256,
            tier=batch.tier,
            page_range=batch.page_range,
            status=BatchStatus.PENDING,
            priority=batch.priority,
            created_at=batch.created_at,
            source=batch.source,
            page_count=batch.page_count,
            requested_backend=batch.requested_backend,
        )

    async def get_many(self, ids: Sequence[int]) -> list[ParseBatch]:
        wanted = [i for i in dict.fromkeys(ids) if 0 < i <= ID_MAX]  # wider ids name no row
        found: dict[int, ParseBatch] = {}
        with store_errors("parse_batch get_many"):
            for start in range(0, len(wanted), IN_LIST_SLICE):
                part = wanted[start : start + IN_LIST_SLICE]
                result = await self._slot.conn.execute(select(parse_batch).where(c.id.in_(part)))
                found.update((b.id, b) for b in map(_to_batch, result.all()))
        return [found[i] for i in wanted if i in found]

    async def raise_priority(self, batch_id: int, priority: int) -> bool:
        with store_errors("parse_batch raise_priority"):
            result = await self._slot.conn.execute(
                _RAISE, {"b_id": batch_id, "b_priority": priority}
            )
        return result.rowcount == 1

    async def claim_next(
        self,
        owner: str,
        now: datetime,
        lease_until: datetime,
        *,
        ids: Sequence[int] | None = None,
    ) -> ParseBatch | None:
        if ids is not None and not ids:
            return None
        conn = self._slot.conn
        with store_errors("parse_batch claim"):
            for _ in range(CLAIM_ROUNDS):
                candidates = [
                    _to_batch(r) for r in (await conn.execute(_claimable(now, ids))).all()
                ]
                if not candidates:
                    return None
                for candidate in candidates:
                    result = await conn.execute(
                        _CLAIM,
                        {
                            "b_id": candidate.id,
                            "b_claims": candidate.claims,
                            "b_now": now,
                            "b_owner": owner,
                            "b_lease_until": lease_until,
                        },
                    )
                    if result.rowcount == 1:
                        return candidate.claim(owner, now, lease_until - now)
        return None

    async def renew(self, batch_id: int, owner: str, claims: int, lease_until: datetime) -> bool:
        with store_errors("parse_batch renew"):
            result = await self._slot.conn.execute(
                _RENEW,
                {
                    "b_id": batch_id,
                    "b_owner": owner,
                    "b_claims": claims,
                    "b_lease_until": lease_until,
                },
            )
        return result.rowcount == 1

    async def finish(
        self,
        batch_id: int,
        owner: str,
        claims: int,
        done_at: datetime,
        backend: str,
        warnings: Sequence[str] = (),
    ) -> bool:
        with store_errors("parse_batch finish"):
            result = await self._slot.conn.execute(
                _FINISH,
                {
                    "b_id": batch_id,
                    "b_owner": owner,
                    "b_claims": claims,
                    "b_at": done_at,
                    "b_backend": backend[:64],
                    "b_warnings": json.dumps(list(warnings), ensure_ascii=False),
                },
            )
        return result.rowcount == 1

    async def fail(
        self, batch_id: int, owner: str, claims: int, at: datetime, code: str, message: str
    ) -> bool:
        with store_errors("parse_batch fail"):
            result = await self._slot.conn.execute(
                _FAIL,
                {
                    "b_id": batch_id,
                    "b_owner": owner,
                    "b_claims": claims,
                    "b_at": at,
                    "b_code": code[:64],
                    "b_message": message[:MAX_ERROR_CHARS],
                },
            )
        return result.rowcount == 1

    async def release(self, batch_id: int, owner: str, claims: int) -> bool:
        with store_errors("parse_batch release"):
            result = await self._slot.conn.execute(
                _RELEASE, {"b_id": batch_id, "b_owner": owner, "b_claims": claims}
            )
        return result.rowcount == 1

    async def held_by_prefix(self, prefix: str) -> list[ParseBatch]:
        query = (
            select(parse_batch)
            .where(c.status == PARSING, c.owner.startswith(prefix, autoescape=True))
            .order_by(c.id)
        )
        with store_errors("parse_batch held_by_prefix"):
            rows = (await self._slot.conn.execute(query)).all()
        return [_to_batch(row) for row in rows]

    async def find_by_source_tag(self, tag: str) -> ParseBatch | None:
        with store_errors("parse_batch find_by_source_tag"):
            result = await self._slot.conn.execute(_BY_TAG, {"b_tag": tag})
            row = result.first()
        return None if row is None else _to_batch(row)

    async def latest_source(self, sha256: str) -> SourceRef | None:
        with store_errors("parse_batch latest_source"):
            result = await self._slot.conn.execute(_LATEST_SOURCE, {"b_sha256": sha256})
            row = result.first()
        if row is None:
            return None
        m = row._mapping
        return SourceRef(m["source_bucket"], m["source_key"], m["file_type"])

    async def add_holder(self, sha256: str, user_id: str) -> None:
        conn = self._slot.conn
        with store_errors("parse_holding add"):
            await conn.execute(
                _holding_insert(conn.dialect.name), {"b_user": user_id, "b_sha256": sha256}
            )

    async def held_by(self, user_id: str, sha256s: Iterable[str]) -> set[str]:
        wanted = sorted(set(sha256s))
        held: set[str] = set()
        h = parse_holding.c
        with store_errors("parse_holding held_by"):
            for start in range(0, len(wanted), IN_LIST_SLICE):
                part = wanted[start : start + IN_LIST_SLICE]
                result = await self._slot.conn.execute(
                    select(h.sha256).where(h.user_id == user_id).where(h.sha256.in_(part))
                )
                held.update(result.scalars().all())
        return held
