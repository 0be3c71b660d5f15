"""Upload rows: what an upload's `Idempotency-Key` was first used for, per user.

The row is written before anything is published; its primary key (user_id, idempotency_key)
is the arbitration between two requests with one key: the first insert wins, the second
reads the winner and answers as it did (same bytes) or refuses (other bytes).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import attrs


@attrs.frozen
class UploadRecord:
    user_id: str
    idempotency_key: str
    sha256: str
    """Of the uploaded bytes: the same key with other bytes is refused."""
    dataset_id: str
    doc_id: str
    task_id: str
    created_at: datetime


class UploadRepository(Protocol):
    async def add(self, record: UploadRecord) -> bool:
        """Insert the row; False (and the transaction still usable) when the user already
        used this idempotency key."""
        ...

    async def get(self, user_id: str, idempotency_key: str) -> UploadRecord | None: ...
