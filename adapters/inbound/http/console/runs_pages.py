"""Console pages over parse runs: the filtered list, one run's stages as a timeline with
its retry button, and failures grouped by code. A tenant token sees its own runs only
(another's run is "no such run", as in the API)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from ragline.adapters.inbound.http.auth import Principal
from ragline.adapters.inbound.http.console.rendering import page, refusal
from ragline.adapters.inbound.http.console.session import Viewer, Writer
from ragline.adapters.inbound.http.console.views import failure_groups, timeline
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.application.access import ReferenceRefused
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.runs import RunNotFound, RunNotRetryable
from ragline.application.tasks import TaskResult
from ragline.domain.parse_run import ParseRun, PipelineStatus

router = APIRouter(prefix="/console", include_in_schema=False)

PAGE_SIZE = 50
FAILURES_READ = 200
"""The failures page groups the newest this many failed runs."""
RETRY_WAIT_SECONDS = 20.0
"""How long the retry button waits for the retry's result before showing it as running."""
NO_SUCH_RUN = "no such run"

IdQuery = Annotated[str | None, Query(max_length=64)]


def _scope(caller: Principal, user_id: str | None) -> str | None:
    """The user a listing is filtered by: a tenant's own, whatever it asks; a service's
    choice (None: every user)."""
    if caller.user_id is not None:
        return caller.user_id
    return user_id or None


def _part(task_id: str) -> str:
    return quote(task_id, safe="")


def _status(value: str | None) -> PipelineStatus | None:
    if not value:
        return None
    try:
        return PipelineStatus(value.upper())
    except ValueError:
        return None


@router.get("")
async def home() -> Response:
    return RedirectResponse("/console/runs", status_code=303)


@router.get("/runs")
async def runs(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    status: Annotated[str | None, Query(max_length=16)] = None,
    user_id: IdQuery = None,
    dataset_id: IdQuery = None,
    page_number: Annotated[int, Query(alias="page", ge=1, le=1_000_000)] = 1,
) -> Response:
    """Runs newest first, filtered by status, user and dataset."""
    wanted = _status(status)
    list_runs = await cases.list_runs()
    found = await list_runs.page(
        RunQuery(user_id=_scope(caller, user_id), dataset_id=dataset_id or None, status=wanted),
        page_number,
        PAGE_SIZE,
    )
    return page(
        request,
        "runs.html",
        caller,
        runs=found.runs,
        total=found.total,
        page_number=page_number,
        last_page=max(1, -(-found.total // PAGE_SIZE)),
        statuses=[s.value for s in PipelineStatus],
        filters={
            "status": wanted.value if wanted else "",
            "user_id": user_id or "",
            "dataset_id": dataset_id or "",
        },
    )


async def _own_run(cases: UseCasesDep, caller: Principal, task_id: str) -> ParseRun | None:
    list_runs = await cases.list_runs()
    found = await list_runs(task_id, user_id=caller.user_id)
    return found[0] if found else None


@router.get("/runs/{task_id}")
async def run(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    task_id: str,
    retry: Annotated[str | None, Query(max_length=16)] = None,
) -> Response:
    """One run: its stages on a time axis, its failure, its retry button when FAILED."""
    found = await _own_run(cases, caller, task_id)
    if found is None:
        return refusal(request, caller, 404, NO_SUCH_RUN)
    list_runs = await cases.list_runs()
    records = await list_runs.parse_records([task_id])
    reason = found.failure_reason
    return page(
        request,
        "run.html",
        caller,
        run=found,
        bars=timeline(found),
        record=records.get(task_id),
        user_message=reason.code.user_message("en") if reason else None,
        retryable=found.pipeline_status is PipelineStatus.FAILED
        and found.superseded_by_task_id is None,
        retry_running=retry == "running",
    )


@router.post("/runs/{task_id}/retry")
async def retry_run(request: Request, cases: UseCasesDep, caller: Writer, task_id: str) -> Response:
    """The API's retry (same rules, same tenancy); shows the retry's run when it ends in
    time, else the failed run marked as being retried."""
    retry = await cases.retry_run()
    try:
        result: TaskResult = await retry(caller.caller, task_id, timeout_seconds=RETRY_WAIT_SECONDS)
    except RunNotFound:
        return refusal(request, caller, 404, NO_SUCH_RUN)
    except RunNotRetryable as error:
        return refusal(request, caller, 409, str(error))
    except ReferenceRefused as error:
        return refusal(request, caller, 403, str(error))
    except TimeoutError:
        return RedirectResponse(f"/console/runs/{_part(task_id)}?retry=running", status_code=303)
    return RedirectResponse(f"/console/runs/{_part(result.task_id)}", status_code=303)


@router.get("/failures")
async def failures(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    user_id: IdQuery = None,
    dataset_id: IdQuery = None,
) -> Response:
    """The newest failed runs grouped by failure code, each code with its user message."""
    list_runs = await cases.list_runs()
    found = await list_runs.page(
        RunQuery(
            user_id=_scope(caller, user_id),
            dataset_id=dataset_id or None,
            status=PipelineStatus.FAILED,
        ),
        1,
        FAILURES_READ,
    )
    return page(
        request,
        "failures.html",
        caller,
        groups=failure_groups(found.runs),
        total=found.total,
        read=len(found.runs),
        filters={"user_id": user_id or "", "dataset_id": dataset_id or ""},
    )
