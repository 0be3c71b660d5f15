"""What the surfaces show of a re-embedding and may do to it: status, the active ones, cancel.

`ragline models reembed status|cancel` and GET/POST /api/v1/reembeddings/{id} call these; a
caller's `user_id` (None: the service) scopes every lookup, so another tenant's re-embedding
answers `ReembeddingNotFound` exactly like one that does not exist.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from ragline.application.ports.clock import Clock
from ragline.application.reembedding.progress import progress
from ragline.application.reembedding.use_cases import Reembeddings
from ragline.application.secrets import masked
from ragline.domain.reembedding import TERMINAL_REEMBEDDING, Reembedding, ReembeddingStatus


@attrs.frozen
class ReembeddingView:
    """One re-embedding with its progress: `rate_per_s` chunks per second since the copy
    started (until it ended), `eta_s` the seconds left at that rate (None: not known yet)."""

    id: str
    user_id: str
    status: ReembeddingStatus
    done: int
    total: int
    rate_per_s: float | None
    eta_s: float | None
    source_generation: int
    target_generation: int
    target_provider: str
    target_model: str
    target_dimension: int
    created_at: datetime
    started_at: datetime | None
    ready_at: datetime | None
    finished_at: datetime | None
    error: str | None

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL_REEMBEDDING


def view_of(item: Reembedding, now: datetime) -> ReembeddingView:
    """The view at `now` (an ended one's rate is over its copy, its ETA 0)."""
    shown = progress(item, item.finished_at or now)
    ended = item.status in TERMINAL_REEMBEDDING
    return ReembeddingView(
        id=item.id,
        user_id=item.user_id,
        status=item.status,
        done=item.done,
        total=item.total,
        rate_per_s=shown.rate_per_s,
        eta_s=0.0 if ended else shown.eta_s,
        source_generation=item.source_generation,
        target_generation=item.target_generation,
        target_provider=item.target.provider,
        target_model=item.target.model,
        target_dimension=item.target.dimension,
        created_at=item.created_at,
        started_at=item.started_at,
        ready_at=item.ready_at,
        finished_at=item.finished_at,
        error=masked(item.error) if item.error else None,
    )


@attrs.frozen
class ManageReembeddings:
    reembeddings: Reembeddings
    clock: Clock

    async def status(self, reembedding_id: str, user_id: str | None) -> ReembeddingView:
        """ReembeddingNotFound when `user_id` (None: the service) may not see it."""
        item = await self.reembeddings.get(reembedding_id, user_id)
        return view_of(item, self.clock.now())

    async def active(self, user_id: str | None) -> list[ReembeddingView]:
        """The user's active re-embedding (at most one), or every one (None), oldest first."""
        async with self.reembeddings.uow() as uow:
            if user_id is None:
                items = await uow.reembeddings.list_active()
            else:
                found = await uow.reembeddings.active_for(user_id)
                items = [found] if found is not None else []
        now = self.clock.now()
        return [view_of(item, now) for item in items]

    async def cancel(self, reembedding_id: str, user_id: str | None) -> ReembeddingView:
        """CANCELLED, the shadow generation dropped and its points removed; the active
        generation is untouched. IllegalReembeddingMove when it has already ended."""
        now = self.clock.now()
        item = await self.reembeddings.cancel(reembedding_id, user_id, now)
        return view_of(item, now)
