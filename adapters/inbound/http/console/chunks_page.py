"""A document's chunks as a tree: each parent's Markdown with its children's spans
highlighted, and the children below it with their index statuses. Paged by parent (the
listing's cursor). Another user's document is "no such document", as in the API."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from ragline.adapters.inbound.http.console.rendering import page, refusal
from ragline.adapters.inbound.http.console.session import Viewer
from ragline.adapters.inbound.http.console.views import Span, highlighted
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.application.documents import DocumentNotFound

router = APIRouter(prefix="/console", include_in_schema=False)

PARENTS_PER_PAGE = 20
NO_SUCH_DOCUMENT = "no such document"


@router.get("/documents/{dataset_id}/{doc_id}/chunks")
async def chunks(
    request: Request,
    cases: UseCasesDep,
    caller: Viewer,
    dataset_id: str,
    doc_id: str,
    user_id: Annotated[str, Query(max_length=64)] = "",
    cursor: Annotated[str, Query(max_length=32)] = "",
) -> Response:
    user = caller.user_id if caller.user_id is not None else user_id.strip()
    if not user:
        return refusal(request, caller, 422, "a service token names the user")
    list_chunks = await cases.list_chunks()
    try:
        found = await list_chunks(
            user, dataset_id, doc_id, cursor=cursor or None, limit=PARENTS_PER_PAGE
        )
    except DocumentNotFound:
        return refusal(request, caller, 404, NO_SUCH_DOCUMENT)
    except ValueError as error:
        return refusal(request, caller, 422, str(error))
    families = [
        (
            family,
            highlighted(
                family.parent.text,
                family.parent.span_start,
                [Span(c.chunk_id, c.span_start, c.span_end) for c in family.children],
            ),
        )
        for family in found.families
    ]
    return page(
        request,
        "chunks.html",
        caller,
        dataset_id=dataset_id,
        doc_id=doc_id,
        user=user,
        families=families,
        next_cursor=found.next_cursor,
    )
