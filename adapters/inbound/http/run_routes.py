"""Parse runs: one run with its stages, and retrying a failed one.

Another tenant's run is not found: the same 404 problem, byte for byte, as a task_id that
does not exist (the application scopes every lookup by the caller)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.adapters.inbound.http.schemas import RetryResult, RunPageView, RunView, StageView
from ragline.application.ports.repositories.parsed_logs import ParsedLog
from ragline.application.ports.repositories.runs import RunPage, RunQuery
from ragline.application.runs import RunNotFound, RunNotRetryable
from ragline.application.secrets import masked
from ragline.application.tasks import TaskResult
from ragline.application.use_cases import UseCases
from ragline.domain.parse_run import ParseRun, PipelineStatus

router = APIRouter(prefix="/api/v1/runs", tags=["runs"], responses=PROBLEM_RESPONSES)

NOT_FOUND = "no such run"


def run_view(run: ParseRun, language: str = "zh", record: ParsedLog | None = None) -> RunView:
    reason = run.failure_reason
    return RunView(
        task_id=run.task_id,
        user_id=run.identity.user_id,
        dataset_id=run.identity.dataset_id,
        original_file_id=run.identity.original_file_id,
        file_type=run.identity.file_type,
        pipeline_status=run.pipeline_status.value,
        stages=[
            StageView(
                stage=stage.value,
                status=state.status.value,
                duration_ms=state.duration_ms,
                inherited=state.inherited,
            )
            for stage, state in run.stages_in_order()
        ],
        failed_stage=run.failed_stage.value if run.failed_stage else None,
        recover_from_stage=run.recover_from_stage.value if run.recover_from_stage else None,
        failure_code=reason.code.value if reason else None,
        failure_reason=masked(reason.text) if reason else None,
        user_message=reason.code.user_message(language) if reason else None,
        created_at=run.created_at,
        finished_at=run.finished_at,
        retry_of_task_id=run.retry_of_task_id,
        superseded_by_task_id=run.superseded_by_task_id,
        parse_backend=record.parse_backend if record else None,
        parse_warnings=list(record.parse_warnings) if record else [],
    )


async def _own_run(cases: UseCases, caller: Principal, task_id: str) -> ParseRun:
    list_runs = await cases.list_runs()
    runs: list[ParseRun] = await list_runs(task_id, user_id=caller.user_id)
    if not runs:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND)
    return runs[0]


@router.get("", response_model=RunPageView)
async def list_runs(
    cases: UseCasesDep,
    caller: Annotated[Principal, Depends(principal)],
    user_id: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=64,
            description="A service token may omit it (every user); a user token sees its own.",
        ),
    ] = None,
    dataset_id: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    status_: Annotated[PipelineStatus | None, Query(alias="status")] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=200)] = 50,
) -> RunPageView:
    """Runs newest first, filtered by user, dataset and pipeline status, paged."""
    user = caller.user_id if caller.user_id is not None else user_id
    runs = await cases.list_runs()
    found: RunPage = await runs.page(
        RunQuery(user_id=user, dataset_id=dataset_id, status=status_), page, page_size
    )
    records = await runs.parse_records([r.task_id for r in found.runs])
    return RunPageView(
        runs=[run_view(r, record=records.get(r.task_id)) for r in found.runs],
        total=found.total,
        page=page,
        page_size=page_size,
    )


@router.get("/{task_id}", response_model=RunView)
async def get_run(
    cases: UseCasesDep,
    task_id: Annotated[str, Path(examples=["task-20260516-001"])],
    caller: Annotated[Principal, Depends(principal)],
) -> RunView:
    """One run: its stages with durations, the failure code, the user message, and the
    parser that really ran with its warnings."""
    run = await _own_run(cases, caller, task_id)
    list_runs = await cases.list_runs()
    records = await list_runs.parse_records([task_id])
    return run_view(run, record=records.get(task_id))


RETRY_ANSWERS: dict[int | str, dict[str, object]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}, "description": text}
    for code, text in (
        (409, "Cannot be retried: already retried, no valid task, or its retry id is taken"),
        (504, "The retry did not answer in time"),
    )
}


@router.post("/{task_id}/retry", response_model=RetryResult, responses=RETRY_ANSWERS)
async def retry_run(
    request: Request,
    cases: UseCasesDep,
    task_id: Annotated[str, Path(examples=["task-20260516-002"])],
    caller: Annotated[Principal, Depends(principal)],
) -> RetryResult:
    """Retry a FAILED run (the rules of `ragline retry`) and wait for the retry's result,
    read from its run in the database (504 when it has none in time; the retry goes on).
    The retry is ragline's own work (task_id `<failed>-r<N>`): no ParseResult is published
    for it (docs/wire-contracts.md).
    403 when its stored task names an object the token may not (docs/security.md)."""
    retry = await cases.retry_run()
    try:
        result: TaskResult = await retry(
            caller.caller, task_id, timeout_seconds=request.app.state.retry_timeout
        )
    except RunNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND) from None
    except RunNotRetryable as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    except TimeoutError:
        raise HTTPException(
            status.HTTP_504_GATEWAY_TIMEOUT, "the retry did not finish in time"
        ) from None
    return RetryResult(
        task_id=result.task_id,
        task_status=result.task_status.value,
        failure_reason=result.failure_reason,
        user_message=result.user_message,
    )
