"""embedding_generation, reembedding, reembedding_batch (issue 21).

Every status change is a compare-and-set whose rowcount is checked: a user's generations
and a re-embedding on their `version`, a copy batch's claim on its `claims` (and the
claimable status), its renew and finish on (copying, owner, claims). The first write of a
user's generations is an insert-if-absent whose rowcount decides, so two planners racing on
a user never both open a shadow.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, bindparam, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ragline.adapters.persistence.sql.api_keys import ApiKeyCipher, SecretKeyError
from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.tables import (
    embedding_generation,
    reembedding,
    reembedding_batch,
)
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.domain.reembedding import (
    ACTIVE_REEMBEDDING,
    CopyBatch,
    CopyBatchStatus,
    EmbeddingSpec,
    Generations,
    Reembedding,
    ReembeddingStatus,
)

g, r, b = embedding_generation.c, reembedding.c, reembedding_batch.c
_GENERATIONS = select(embedding_generation).where(
    g.user_id == bindparam("b_user_id", type_=g.user_id.type)
)  # read by each vectorizing stage (three times a file): built once
PENDING, COPYING = CopyBatchStatus.PENDING.value, CopyBatchStatus.COPYING.value
ACTIVE = sorted(s.value for s in ACTIVE_REEMBEDDING)
CLAIM_CANDIDATES = 8
CLAIM_ROUNDS = 5


def _to_generations(row: Row[Any]) -> Generations:
    m = row._mapping
    return Generations(
        user_id=m["user_id"],
        active=int(m["active"]),
        shadow=None if m["shadow"] is None else int(m["shadow"]),
        newest=int(m["newest"]),
        version=int(m["version"]),
        vectorizing_starts=int(m["vectorizing_starts"]),
    )


def _to_reembedding(row: Row[Any], api_key: str | None) -> Reembedding:
    m = row._mapping
    return Reembedding(
        id=m["id"],
        user_id=m["user_id"],
        source_generation=int(m["source_generation"]),
        target_generation=int(m["target_generation"]),
        target=EmbeddingSpec(m["provider"], m["model"], int(m["dimension"])),
        created_at=m["created_at"],
        status=ReembeddingStatus(m["status"]),
        total=int(m["total"]),
        done=int(m["done"]),
        started_at=m["started_at"],
        ready_at=m["ready_at"],
        finished_at=m["finished_at"],
        error=m["error"],
        version=int(m["version"]),
        source_dimension=m["source_dimension"],
        target_base_url=m["base_url"],
        target_api_key=api_key,
    )


def _to_batch(row: Row[Any]) -> CopyBatch:
    m = row._mapping
    return CopyBatch(
        reembedding_id=m["reembedding_id"],
        seq=int(m["seq"]),
        first_chunk_id=m["first_chunk_id"],
        last_chunk_id=m["last_chunk_id"],
        size=int(m["size"]),
        status=CopyBatchStatus(m["status"]),
        owner=m["owner"],
        lease_until=m["lease_until"],
        claims=int(m["claims"]),
        copied=int(m["copied"]),
        digest=m["copied_digest"],
    )


def _generation_columns(gens: Generations) -> dict[str, Any]:
    return {
        "active": gens.active,
        "shadow": gens.shadow,
        "newest": gens.newest,
        "version": gens.version,
    }


def _state_columns(item: Reembedding) -> dict[str, Any]:
    return {
        "status": item.status.value,
        "total": item.total,
        "done": item.done,
        "started_at": item.started_at,
        "ready_at": item.ready_at,
        "finished_at": item.finished_at,
        "error": item.error,
        "version": item.version,
    }


def _insert_if_absent(dialect: str) -> Any:
    """An insert a duplicate key turns into no row (no error: the transaction lives). SQLite
    and PostgreSQL say so by RETURNING nothing, MariaDB/MySQL by rowcount 0 (INSERT IGNORE)."""
    if dialect == "sqlite":
        return sqlite.insert(embedding_generation).on_conflict_do_nothing().returning(g.user_id)
    if dialect == "postgresql":
        return postgresql.insert(embedding_generation).on_conflict_do_nothing().returning(g.user_id)
    return insert(embedding_generation).prefix_with("IGNORE")


def _newer(kind: str, key: str, version: int, expected: int) -> None:
    if version <= expected:
        raise ValueError(f"{kind} {key} version {version} is not newer than {expected}")


_CLAIM = (
    update(reembedding_batch)
    .where(b.reembedding_id == bindparam("b_rid"))
    .where(b.seq == bindparam("b_seq"))
    .where(b.claims == bindparam("b_claims"))
    .where(
        or_(
            b.status == PENDING,
            and_(
                b.status == COPYING,
                b.lease_until <= bindparam("b_now", type_=b.lease_until.type),
            ),
        )
    )
    .values(
        status=COPYING,
        owner=bindparam("b_owner"),
        lease_until=bindparam("b_lease_until", type_=b.lease_until.type),
        claims=b.claims + 1,
    )
)


def _held() -> Any:
    return (
        update(reembedding_batch)
        .where(b.reembedding_id == bindparam("b_rid"))
        .where(b.seq == bindparam("b_seq"))
        .where(b.status == COPYING)
        .where(b.owner == bindparam("b_owner"))
        .where(b.claims == bindparam("b_claims"))
    )


_RENEW = _held().values(lease_until=bindparam("b_lease_until", type_=b.lease_until.type))
_FINISH = _held().values(
    status=CopyBatchStatus.DONE.value,
    lease_until=None,
    copied=bindparam("b_copied"),
    copied_digest=bindparam("b_digest"),
)


class SqlReembeddingRepository:
    """The target config's API key is kept as model_config keeps its own: a token of the
    same cipher, decrypted only when a row is read."""

    def __init__(self, slot: ConnectionSlot, cipher: ApiKeyCipher | None = None) -> None:
        self._slot = slot
        self._cipher = cipher

    def _cipher_or_fail(self) -> ApiKeyCipher:
        if self._cipher is None:
            raise SecretKeyError("no API key encryption key is configured")
        return self._cipher

    def _row(self, row: Row[Any]) -> Reembedding:
        token = row._mapping["api_key_encrypted"]
        return _to_reembedding(
            row, None if token is None else self._cipher_or_fail().decrypt(token)
        )

    async def generations(self, user_id: str) -> Generations:
        with store_errors("embedding_generation get"):
            row = (await self._slot.conn.execute(_GENERATIONS, {"b_user_id": user_id})).first()
        return Generations(user_id) if row is None else _to_generations(row)

    async def save_generations(
        self,
        generations: Generations,
        expected_version: int,
        *,
        starts_seen: int | None = None,
    ) -> None:
        _newer("generations of", generations.user_id, generations.version, expected_version)
        conn = self._slot.conn
        columns = _generation_columns(generations)
        with store_errors("embedding_generation save"):
            if expected_version == 0:
                statement = _insert_if_absent(conn.dialect.name)
                result = await conn.execute(statement, {"user_id": generations.user_id} | columns)
                won = len(result.all()) if result.returns_rows else result.rowcount
            else:
                statement = (
                    update(embedding_generation)
                    .where(g.user_id == generations.user_id)
                    .where(g.version == expected_version)
                )
                if starts_seen is not None:
                    statement = statement.where(g.vectorizing_starts == starts_seen)
                won = (await conn.execute(statement.values(columns))).rowcount
        if won != 1:
            raise ConcurrentUpdate(
                f"generations of {generations.user_id} are no longer at version {expected_version}"
                + ("" if starts_seen is None else f" with {starts_seen} VECTORIZING starts")
            )

    async def note_vectorizing(self, user_id: str) -> None:
        with store_errors("embedding_generation note_vectorizing"):
            result = await self._slot.conn.execute(
                update(embedding_generation)
                .where(g.user_id == user_id)
                .values(vectorizing_starts=g.vectorizing_starts + 1)
            )
        if result.rowcount != 1:
            raise ConcurrentUpdate(f"user {user_id} has no generations to count a start in")

    async def add(self, reembedding_: Reembedding) -> None:
        key = reembedding_.target_api_key
        row = {
            "id": reembedding_.id,
            "user_id": reembedding_.user_id,
            "source_generation": reembedding_.source_generation,
            "target_generation": reembedding_.target_generation,
            "provider": reembedding_.target.provider,
            "model": reembedding_.target.model,
            "dimension": reembedding_.target.dimension,
            "source_dimension": reembedding_.source_dimension,
            "base_url": reembedding_.target_base_url,
            "api_key_encrypted": None if key is None else self._cipher_or_fail().encrypt(key),
            "created_at": reembedding_.created_at,
        } | _state_columns(reembedding_)
        with store_errors("reembedding add"):
            await self._slot.conn.execute(reembedding.insert(), row)

    async def get(self, reembedding_id: str) -> Reembedding | None:
        with store_errors("reembedding get"):
            row = (
                await self._slot.conn.execute(select(reembedding).where(r.id == reembedding_id))
            ).first()
        return None if row is None else self._row(row)

    async def active_for(self, user_id: str) -> Reembedding | None:
        with store_errors("reembedding active_for"):
            row = (
                await self._slot.conn.execute(
                    select(reembedding)
                    .where(r.user_id == user_id)
                    .where(r.status.in_(ACTIVE))
                    .order_by(r.created_at.desc())
                    .limit(1)
                )
            ).first()
        return None if row is None else self._row(row)

    async def list_active(self) -> list[Reembedding]:
        with store_errors("reembedding list_active"):
            result = await self._slot.conn.execute(
                select(reembedding).where(r.status.in_(ACTIVE)).order_by(r.created_at, r.id)
            )
            return [self._row(row) for row in result.all()]

    async def save(self, reembedding_: Reembedding, expected_version: int) -> None:
        _newer("re-embedding", reembedding_.id, reembedding_.version, expected_version)
        with store_errors("reembedding save"):
            result = await self._slot.conn.execute(
                update(reembedding)
                .where(r.id == reembedding_.id)
                .where(r.version == expected_version)
                .values(_state_columns(reembedding_))
            )
        if result.rowcount != 1:
            raise ConcurrentUpdate(
                f"re-embedding {reembedding_.id} is no longer at version {expected_version}"
            )

    async def add_batches(self, batches: Sequence[CopyBatch]) -> None:
        if not batches:
            return
        rows = [
            {
                "reembedding_id": x.reembedding_id,
                "seq": x.seq,
                "first_chunk_id": x.first_chunk_id,
                "last_chunk_id": x.last_chunk_id,
                "size": x.size,
                "status": x.status.value,
                "owner": x.owner,
                "lease_until": x.lease_until,
                "claims": x.claims,
                "copied": x.copied,
                "copied_digest": x.digest,
            }
            for x in batches
        ]
        with store_errors("reembedding_batch add"):
            await self._slot.conn.execute(reembedding_batch.insert(), rows)

    async def batches(self, reembedding_id: str) -> list[CopyBatch]:
        with store_errors("reembedding_batch list"):
            result = await self._slot.conn.execute(
                select(reembedding_batch).where(b.reembedding_id == reembedding_id).order_by(b.seq)
            )
            return [_to_batch(row) for row in result.all()]

    async def claim_batch(
        self, reembedding_id: str, owner: str, now: datetime, lease_until: datetime
    ) -> CopyBatch | None:
        conn = self._slot.conn
        claimable = (
            select(reembedding_batch)
            .where(b.reembedding_id == reembedding_id)
            .where(or_(b.status == PENDING, and_(b.status == COPYING, b.lease_until <= now)))
            .order_by(b.seq)
            .limit(CLAIM_CANDIDATES)
        )
        with store_errors("reembedding_batch claim"):
            for _ in range(CLAIM_ROUNDS):
                candidates = [_to_batch(row) for row in (await conn.execute(claimable)).all()]
                if not candidates:
                    return None
                for candidate in candidates:
                    result = await conn.execute(
                        _CLAIM,
                        {
                            "b_rid": reembedding_id,
                            "b_seq": candidate.seq,
                            "b_claims": candidate.claims,
                            "b_now": now,
                            "b_owner": owner,
                            "b_lease_until": lease_until,
                        },
                    )
                    if result.rowcount == 1:
                        return candidate.claim(owner, now, lease_until - now)
        return None

    async def renew_batch(
        self, reembedding_id: str, seq: int, owner: str, claims: int, lease_until: datetime
    ) -> bool:
        params = {"b_rid": reembedding_id, "b_seq": seq, "b_owner": owner, "b_claims": claims}
        with store_errors("reembedding_batch renew"):
            result = await self._slot.conn.execute(_RENEW, params | {"b_lease_until": lease_until})
        return result.rowcount == 1

    async def finish_batch(
        self,
        reembedding_id: str,
        seq: int,
        owner: str,
        claims: int,
        copied: int,
        digest: str | None = None,
    ) -> bool:
        params = {"b_rid": reembedding_id, "b_seq": seq, "b_owner": owner, "b_claims": claims}
        done = {"b_copied": copied, "b_digest": digest}
        with store_errors("reembedding_batch finish"):
            result = await self._slot.conn.execute(_FINISH, params | done)
        return result.rowcount == 1
