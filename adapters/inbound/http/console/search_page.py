"""The search playground: one query through the real hybrid search, each hit with its rank
in every retriever and its fused score (`ragline search --explain`'s data). A tenant token
searches its own user's data; a service token names the user."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from ragline.adapters.inbound.http.console.rendering import page, refusal
from ragline.adapters.inbound.http.console.session import Viewer
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.application.search.tuning import RETRIEVERS
from ragline.application.search.use_case import NoEmbeddingConfig, SearchAnswer, SearchUnavailable

router = APIRouter(prefix="/console", include_in_schema=False)


@router.get("/search")
async def search(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    q: Annotated[str, Query(max_length=2000)] = "",
    dataset_id: Annotated[str, Query(max_length=64)] = "",
    user_id: Annotated[str, Query(max_length=64)] = "",
    top_k: Annotated[int, Query(ge=1, le=50)] = 10,
) -> Response:
    user = caller.user_id if caller.user_id is not None else user_id.strip()
    form = {"q": q, "dataset_id": dataset_id, "user_id": user_id, "top_k": top_k}
    answer: SearchAnswer | None = None
    note = ""
    if q.strip() and dataset_id.strip():
        if not user:
            return refusal(request, caller, 422, "a service token names the user to search for")
        hybrid_search = await cases.hybrid_search()
        try:
            [answer] = await hybrid_search.search_many([q], user, dataset_id.strip(), top_k)
        except NoEmbeddingConfig:
            note = "nothing of this user was ever indexed"
        except SearchUnavailable as error:
            return refusal(request, caller, 503, str(error))
    return page(
        request,
        "search.html",
        caller,
        form=form,
        answer=answer,
        note=note,
        retrievers=RETRIEVERS,
        user=user,
    )
