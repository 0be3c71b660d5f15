"""The outbox for operators: list results by status, redrive DEAD ones (service token only).

A tenant never sees the outbox: it holds every tenant's results, so a user token gets 403.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES
from ragline.adapters.inbound.http.schemas import (
    MAX_ID,
    OutboxPageView,
    OutboxRowView,
    RedriveRequest,
    RedriveResult,
)
from ragline.application.outbox import ManageOutbox, RedriveReport, UnknownOutboxStatus
from ragline.application.ports.repositories.outbox import OutboxMessage

router = APIRouter(prefix="/api/v1/outbox", tags=["operations"], responses=PROBLEM_RESPONSES)


def service_only(caller: Annotated[Principal, Depends(principal)]) -> Principal:
    if not caller.is_service:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "the outbox needs the service token")
    return caller


def row_view(row: OutboxMessage) -> OutboxRowView:
    return OutboxRowView(
        id=row.id,
        task_id=row.task_id,
        status=row.status,
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        routing_key=row.routing_key,
        topic=row.topic,
        claimed_by=row.claimed_by,
        claimed_until=row.claimed_until,
        updated_at=row.updated_at,
    )


@router.get("", response_model=OutboxPageView)
async def list_outbox(
    cases: UseCasesDep,
    _: Annotated[Principal, Depends(service_only)],
    status_: Annotated[
        str | None,
        Query(alias="status", description="pending, sent or dead (any case).", examples=["dead"]),
    ] = None,
    task_id: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
    after_id: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> OutboxPageView:
    """Outbox rows in id order (`status=dead`: the results the relay gave up on)."""
    manage: ManageOutbox = await cases.manage_outbox()
    try:
        rows = await manage.list(status_, task_id, after_id=after_id, limit=limit)
    except UnknownOutboxStatus as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    counts = await manage.counts()
    return OutboxPageView(
        rows=[row_view(r) for r in rows],
        counts=dict(counts),
        next_after_id=rows[-1].id if len(rows) == limit else None,
    )


@router.post("/redrive", response_model=RedriveResult)
async def redrive(
    cases: UseCasesDep,
    body: RedriveRequest,
    _: Annotated[Principal, Depends(service_only)],
) -> RedriveResult:
    """Set DEAD results back to PENDING with fresh attempts (compare-and-set DEAD -> PENDING);
    the relay publishes them again. Rows that are not DEAD are listed in `refused`."""
    if bool(body.task_ids) == body.all_dead:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "give task_ids or all_dead=true (one of them)"
        )
    manage: ManageOutbox = await cases.manage_outbox()
    report: RedriveReport
    if body.all_dead:
        report = await manage.redrive_all_dead()
    else:
        report = await manage.redrive(body.task_ids)
    return RedriveResult(redriven=report.redriven, refused=report.refused)
