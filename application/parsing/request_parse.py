"""RequestParse: plan a parse request (the domain's planning rule) and persist the plan.

One unit of work: lock the (sha256, tier) for planning, record who asked as a holder of the
bytes (application/access/parse_cache.py), read its batches, raise the reused ones, insert the
new ones, commit. The lock makes concurrent requests of the same file and tier plan one after
the other, so their new batches never overlap.
"""

from __future__ import annotations

import attrs

from ragline.application.access.parse_cache import record_holder
from ragline.application.ports.clock import Clock
from ragline.application.ports.repositories.parse_batches import NewParseBatch
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.domain.parse_batch import (
    PageRange,
    ParseBatch,
    ParseRequest,
    ParseTier,
    RequestStatus,
    SourceRef,
    plan,
)


@attrs.frozen
class ParseResponse:
    """The answer of `POST /parses` (docs/design/0003-parse-cache.md): wait = reused + created."""

    sha256: str
    tier: ParseTier
    page_range: PageRange
    status: RequestStatus
    wait_parse_ids: tuple[int, ...]
    created_parse_ids: tuple[int, ...]
    reused_parse_ids: tuple[int, ...]


class RequestParse:
    def __init__(self, uow_factory: UnitOfWorkFactory, clock: Clock, pages_per_batch: int):
        self._uow_factory = uow_factory
        self._clock = clock
        self._pages_per_batch = pages_per_batch

    async def __call__(self, request: ParseRequest, source: SourceRef) -> ParseResponse:
        response, _ = await self.planned(request, source)
        return response

    async def planned(
        self,
        request: ParseRequest,
        source: SourceRef,
        *,
        page_count: int | None = None,
        source_tag: str | None = None,
        backend: str | None = None,
        holder: str | None = None,
    ) -> tuple[ParseResponse, list[ParseBatch]]:
        """The response, and every batch of (sha256, tier) as the plan left them. `backend`:
        the pdf_parser_backend new batches are parsed with (None: the tier's own); `holder`:
        the user who holds these bytes (None: the service, nothing recorded)."""
        async with self._uow_factory() as uow:
            found = await self._plan_in(
                uow, request, source, page_count, source_tag, backend, holder
            )
            await uow.commit()
        return found

    async def planned_for_version(
        self,
        tag: str,
        tier: ParseTier,
        source: SourceRef,
        backend: str | None = None,
        holder: str | None = None,
    ) -> tuple[ParseResponse, list[ParseBatch], int] | None:
        """Every page of a stored object version seen before (`source_tag`), planned in
        the same transaction that finds its sha256 and page count; None when unseen."""
        async with self._uow_factory() as uow:
            seen = await uow.parse_batches.find_by_source_tag(tag)
            if seen is None or seen.page_count is None:
                return None
            request = ParseRequest(seen.sha256, tier, PageRange(1, seen.page_count))
            response, after = await self._plan_in(
                uow, request, source, seen.page_count, tag, backend, holder
            )
            await uow.commit()
        return response, after, seen.page_count

    async def _plan_in(
        self,
        uow: UnitOfWork,
        request: ParseRequest,
        source: SourceRef,
        page_count: int | None,
        source_tag: str | None,
        backend: str | None,
        holder: str | None,
    ) -> tuple[ParseResponse, list[ParseBatch]]:
        batches = uow.parse_batches
        await batches.lock_document(request.sha256, request.tier)
        await record_holder(uow, holder, request.sha256)
        known = await batches.list_for(request.sha256, request.tier)
        decided = plan(request, known, self._pages_per_batch)
        for reused in decided.reused:
            await batches.raise_priority(reused.id, reused.priority)
        now = self._clock.now()
        created = [
            await batches.add(
                NewParseBatch(
                    sha256=request.sha256,
                    tier=request.tier,
                    page_range=pages,
                    priority=request.priority,
                    source=source,
                    created_at=now,
                    page_count=page_count,
                    source_tag=source_tag,
                    requested_backend=backend,
                )
            )
            for pages in decided.to_create
        ]
        raised = {b.id: b for b in decided.reused}
        after = [raised.get(b.id, b) for b in known] + created
        reused_ids = tuple(b.id for b in decided.reused)
        created_ids = tuple(b.id for b in created)
        response = ParseResponse(
            sha256=request.sha256,
            tier=request.tier,
            page_range=request.page_range,
            status=decided.status,
            wait_parse_ids=reused_ids + created_ids,
            created_parse_ids=created_ids,
            reused_parse_ids=reused_ids,
        )
        return response, after
