"""A dataset's documents with their state and chunk counts, each linking to its chunk
tree. A tenant token lists its own user's documents; a service token names the user."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from ragline.adapters.inbound.http.console.rendering import page, refusal
from ragline.adapters.inbound.http.console.session import Viewer
from ragline.adapters.inbound.http.dependencies import UseCasesDep

router = APIRouter(prefix="/console", include_in_schema=False)

PAGE_SIZE = 50


@router.get("/documents")
async def documents(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    dataset_id: Annotated[str, Query(max_length=64)] = "",
    user_id: Annotated[str, Query(max_length=64)] = "",
    page_number: Annotated[int, Query(alias="page", ge=1, le=1_000_000)] = 1,
) -> Response:
    user = caller.user_id if caller.user_id is not None else user_id.strip()
    form = {"dataset_id": dataset_id, "user_id": user_id}
    listing = None
    if dataset_id.strip():
        if not user:
            return refusal(request, caller, 422, "a service token names the user")
        list_documents = await cases.list_documents()
        listing = await list_documents(user, dataset_id.strip(), page_number, PAGE_SIZE)
    return page(request, "documents.html", caller, form=form, listing=listing, user=user)
