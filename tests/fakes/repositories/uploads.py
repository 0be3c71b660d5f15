"""In-memory upload rows: the first insert of a (user, idempotency key) wins."""

from __future__ import annotations

from ragline.application.ports.repositories.uploads import UploadRecord
from tests.fakes.repositories.base import FakeRepository


class FakeUploads(FakeRepository):
    async def add(self, record: UploadRecord) -> bool:
        await self.check("uploads.add")
        key = (record.user_id, record.idempotency_key)
        await self.uow.lock(("uploads", key))
        if key in self.db.uploads or key in self.uow.pending_uploads:
            return False
        self.uow.pending_uploads[key] = record
        return True

    async def get(self, user_id: str, idempotency_key: str) -> UploadRecord | None:
        await self.check("uploads.get")
        key = (user_id, idempotency_key)
        return self.uow.pending_uploads.get(key) or self.db.uploads.get(key)
