"""How far a re-embedding has come, as `ragline models reembed status` and the HTTP API show it."""

from __future__ import annotations

from datetime import datetime

import attrs

from ragline.domain.reembedding import Reembedding, ReembeddingStatus


@attrs.frozen
class Progress:
    """What `ragline models reembed status` and GET /api/v1/reembeddings/{id} show."""

    id: str
    status: ReembeddingStatus
    done: int
    total: int
    rate_per_s: float | None
    eta_s: float | None


def progress(item: Reembedding, now: datetime) -> Progress:
    rate = eta = None
    if item.started_at is not None and item.done:
        seconds = max((now - item.started_at).total_seconds(), 1e-6)
        rate = item.done / seconds
        eta = max(item.total - item.done, 0) / rate
    return Progress(item.id, item.status, item.done, item.total, rate, eta)
