"""Liveness, readiness (every configured adapter answers) and Prometheus metrics."""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.schemas import Alive, Check, Readiness
from ragline.application.error_text import describe, without_paths
from ragline.application.health import Check as HealthCheck

router = APIRouter(tags=["operations"])

READY_TIMEOUT_SECONDS = 10.0
COUNT_TIMEOUT_SECONDS = 5.0
log = logging.getLogger("ragline.http")


@router.get("/healthz", response_model=Alive)
async def healthz() -> Alive:
    """The process is alive (answers without touching any adapter)."""
    return Alive()


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(cases: UseCasesDep) -> JSONResponse:
    """Every configured adapter answers (the `ragline doctor` probes); 503 otherwise."""
    check_health = await cases.check_health()
    try:
        checks: list[HealthCheck] = await asyncio.wait_for(check_health(), READY_TIMEOUT_SECONDS)
    except TimeoutError:
        body = Readiness(
            ready=False, checks=[Check(part="all", adapter="", ok=False, detail="timed out")]
        )
        return JSONResponse(body.model_dump(), status_code=503)
    body = Readiness(
        ready=all(c.ok for c in checks),
        checks=[  # unauthenticated: what answers, never where its files are (doctor shows that)
            Check(part=c.part, adapter=c.adapter, ok=c.ok, detail=without_paths(c.detail))
            for c in checks
        ],
    )
    return JSONResponse(body.model_dump(), status_code=200 if body.ready else 503)


@router.get("/metrics", response_class=Response)
async def metrics(cases: UseCasesDep) -> Response:
    """Prometheus text format. The outbox is counted per scrape (`ragline_outbox_rows`);
    when the database does not answer, the gauge keeps its last value and the scrape still
    succeeds."""
    try:
        manage = await cases.manage_outbox()
        await asyncio.wait_for(manage.counts(), COUNT_TIMEOUT_SECONDS)
    except Exception as error:  # a metrics scrape must not fail on the database
        log.warning("could not count the outbox for /metrics: %s", describe(error))
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
