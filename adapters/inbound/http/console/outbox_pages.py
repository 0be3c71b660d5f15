"""The outbox page: results the relay gave up on (DEAD) with a redrive button per row and
one for all. The outbox holds every tenant's results, so only the service token sees it
(a tenant token gets 403, as from the API)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from ragline.adapters.inbound.http.console.rendering import page, refusal
from ragline.adapters.inbound.http.console.session import Operator, Viewer
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.application.outbox import RedriveReport, UnknownOutboxStatus
from ragline.application.secrets import masked

router = APIRouter(prefix="/console", include_in_schema=False)

ROWS = 200
SERVICE_ONLY = "the outbox needs the service token"


@router.get("/outbox")
async def outbox(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    status: Annotated[str, Query(max_length=16)] = "dead",
    redriven: Annotated[int | None, Query(ge=0, le=1_000_000)] = None,
    refused: Annotated[int | None, Query(ge=0, le=1_000_000)] = None,
) -> Response:
    if not caller.is_service:
        return refusal(request, caller, 403, SERVICE_ONLY)
    manage = await cases.manage_outbox()
    try:
        rows = await manage.list(status or None, limit=ROWS)
    except UnknownOutboxStatus as error:
        return refusal(request, caller, 422, str(error))
    counts = await manage.counts()
    return page(
        request,
        "outbox.html",
        caller,
        rows=rows,
        errors={row.id: masked(row.last_error) if row.last_error else "" for row in rows},
        counts=dict(counts),
        status=status.upper(),
        redriven=redriven,
        refused=refused,
    )


@router.post("/outbox/redrive")
async def redrive(
    cases: UseCasesDep,
    _: Operator,
    task_id: Annotated[str, Form(max_length=256)] = "",
    all_dead: Annotated[bool, Form()] = False,
) -> Response:
    """The API's redrive: DEAD -> PENDING by compare-and-set; the relay publishes again."""
    manage = await cases.manage_outbox()
    report: RedriveReport
    if all_dead:
        report = await manage.redrive_all_dead()
    else:
        report = await manage.redrive([task_id] if task_id else [])
    return RedirectResponse(
        f"/console/outbox?redriven={len(report.redriven)}&refused={len(report.refused)}",
        status_code=303,
    )
