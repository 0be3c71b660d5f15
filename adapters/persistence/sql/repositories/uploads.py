"""upload: an upload's Idempotency-Key per user; the primary key arbitrates two requests."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ragline.adapters.persistence.sql.connection import ConnectionSlot
from ragline.adapters.persistence.sql.errors import store_errors
from ragline.adapters.persistence.sql.tables import upload
from ragline.application.ports.repositories.uploads import UploadRecord


class SqlUploadRepository:
    def __init__(self, slot: ConnectionSlot) -> None:
        self._slot = slot

    async def add(self, record: UploadRecord) -> bool:
        conn = self._slot.conn
        with store_errors("upload add"):
            try:
                async with conn.begin_nested():  # a duplicate leaves the transaction usable
                    await conn.execute(
                        upload.insert().values(
                            user_id=record.user_id,
                            idempotency_key=record.idempotency_key,
                            sha256=record.sha256,
                            dataset_id=record.dataset_id,
                            doc_id=record.doc_id,
                            task_id=record.task_id,
                            created_at=record.created_at,
                        )
                    )
            except IntegrityError:
                return False
        return True

    async def get(self, user_id: str, idempotency_key: str) -> UploadRecord | None:
        with store_errors("upload get"):
            result = await self._slot.conn.execute(
                select(upload)
                .where(upload.c.user_id == user_id)
                .where(upload.c.idempotency_key == idempotency_key)
            )
            row = result.first()
        if row is None:
            return None
        m = row._mapping
        return UploadRecord(
            user_id=m["user_id"],
            idempotency_key=m["idempotency_key"],
            sha256=m["sha256"],
            dataset_id=m["dataset_id"],
            doc_id=m["doc_id"],
            task_id=m["task_id"],
            created_at=m["created_at"],
        )
