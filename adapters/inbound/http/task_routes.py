"""Task dead letters back onto the task topic (service token only): the HTTP face of
`ragline tasks redrive`. The dead-letter topic holds every tenant's tasks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES
from ragline.adapters.inbound.http.schemas import TaskRedriveRequest, TaskRedriveResult

router = APIRouter(prefix="/api/v1/tasks", tags=["operations"], responses=PROBLEM_RESPONSES)


def service_only(caller: Annotated[Principal, Depends(principal)]) -> Principal:
    if not caller.is_service:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "task dead letters need the service token")
    return caller


@router.post("/redrive", response_model=TaskRedriveResult)
async def redrive(
    cases: UseCasesDep, body: TaskRedriveRequest, _: Annotated[Principal, Depends(service_only)]
) -> TaskRedriveResult:
    """Publish the task dead letters to the task topic again (up to `limit`; stops once
    none arrives for 2 s); the workers take them as new deliveries."""
    redrive_tasks = await cases.redrive_tasks()
    report = await redrive_tasks(body.limit)
    return TaskRedriveResult(redriven=report.redriven)
