"""The parse cache over HTTP (docs/design/0003-parse-cache.md): request a parse, ask batch statuses
by id, ask the coverage of a document at a tier, read the cached Markdown.

`doc_ref` is a sha256 (bytes the cache has seen) or `bucket/key` of a stored object. The
use case checks an object reference against the caller (a user token names only its own
`<user_id>/` keys of the tenant buckets: 403 otherwise; docs/security.md). What a user token
is answered the application decides (application/access/parse_cache.py): only batches of bytes
that user holds; a sha256 it does not hold is unknown (404) and its batch ids are left out,
exactly as if they did not exist. Bad tiers and page ranges are 422 problems; a range past the
last page is 422 too; an unknown document is 404.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Body, Depends, HTTPException, Query, status
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.adapters.inbound.http.schemas import MAX_ID
from ragline.application.parsing import (
    NotCached,
    PageRangeOutOfBounds,
    ParseResponse,
    ReadParse,
    SubmitParse,
    UnknownDocument,
    is_sha256,
)
from ragline.application.ports.parser import ParseError
from ragline.application.use_cases import UseCases
from ragline.domain.parse_batch import MAX_PAGE, PageRange, ParseBatch, ParseTier

router = APIRouter(prefix="/api/v1/parses", tags=["parses"], responses=PROBLEM_RESPONSES)

RANGE_PATTERN = r"^\s*\d+\s*(-\s*\d+\s*)?$"
RANGE_CHARS = 64
IDS = re.compile(r"^\s*\d+(\s*,\s*\d+)*\s*$")
MAX_IDS = 500
DOC_REF = "tolink-rag-docs/raw/2026/05/16/doc-001.pdf"
PLAN = {"doc_ref": DOC_REF, "tier": "basic", "page_range": "1-2"}
DOC_REF_HELP = "sha256 of the bytes, or bucket/key of a stored object."
CONFLICT: dict[int | str, dict[str, object]] = {
    409: {
        "model": Problem,
        "content": {"application/problem+json": {}},
        "description": "Some pages are not parsed yet at this tier",
    }
}


class ParseRequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_ref: str = Field(
        min_length=1,
        max_length=1300,
        description="sha256 of the bytes, or bucket/key of a stored object (a user token: "
        "its own `<user_id>/` keys only).",
    )
    tier: ParseTier = ParseTier.BASIC
    page_range: str | None = Field(
        None,
        pattern=RANGE_PATTERN,
        max_length=RANGE_CHARS,
        description=f"N or N-M, 1-based inclusive, at most page {MAX_PAGE}; empty: all.",
    )
    force: bool = Field(False, description="Skip the done cache (active batches still reused).")
    file_type: str | None = Field(
        None, max_length=16, description="When the object key has no usable extension."
    )


class ParseResponseView(BaseModel):
    sha256: str
    tier: str
    page_range: str
    status: str
    wait_parse_ids: list[int]
    created_parse_ids: list[int]
    reused_parse_ids: list[int]


class ParseBatchView(BaseModel):
    id: int
    sha256: str
    tier: str
    page_range: str
    status: str
    priority: int
    error_code: str | None
    error_msg: str | None
    backend: str | None
    created_at: datetime
    started_at: datetime | None
    done_at: datetime | None


class ParseBatchesView(BaseModel):
    parses: list[ParseBatchView]


class CoverageView(BaseModel):
    sha256: str
    tier: str
    page_range: str
    status: str = Field(description="done when every page is cached, else pending/parsing.")
    missing_pages: list[int]
    parses: list[ParseBatchView] = Field(
        description="The done batches the pages are read from, then the active ones."
    )


class MarkdownView(BaseModel):
    sha256: str
    tier: str
    page_range: str
    markdown: str
    pages: list[str]
    parse_ids: list[int] = Field(description="The batch each page was read from.")


def response_view(response: ParseResponse) -> ParseResponseView:
    return ParseResponseView(
        sha256=response.sha256,
        tier=response.tier.value,
        page_range=str(response.page_range),
        status=response.status.value,
        wait_parse_ids=list(response.wait_parse_ids),
        created_parse_ids=list(response.created_parse_ids),
        reused_parse_ids=list(response.reused_parse_ids),
    )


def batch_view(batch: ParseBatch) -> ParseBatchView:
    return ParseBatchView(
        id=batch.id,
        sha256=batch.sha256,
        tier=batch.tier.value,
        page_range=str(batch.page_range),
        status=batch.status.value,
        priority=batch.priority,
        error_code=batch.error_code,
        error_msg=batch.error_msg,
        backend=batch.backend,
        created_at=batch.created_at,
        started_at=batch.started_at,
        done_at=batch.done_at,
    )


def _unprocessable(detail: str) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, detail)


def page_range_of(text: str | None) -> PageRange | None:
    if text is None or not text.strip():
        return None
    try:
        return PageRange.parse(text)
    except ValueError as error:
        raise _unprocessable(f"page_range: {error}") from None


def _batch_id(text: str) -> int:
    digits = text.strip()
    if len(digits.lstrip("0")) > len(str(MAX_ID)) or int(digits) > MAX_ID:
        raise _unprocessable(f"ids: each id is at most {MAX_ID}")
    return int(digits)


def _ref(doc_ref: str) -> str:
    ref = doc_ref.strip()
    return ref.lower() if is_sha256(ref.lower()) else ref


@router.post("", response_model=ParseResponseView)
async def request_parse(
    cases: UseCasesDep,
    body: Annotated[ParseRequestBody, Body(openapi_examples={"stored object": {"value": PLAN}})],
    caller: Annotated[Principal, Depends(principal)],
) -> ParseResponseView:
    """Plan a parse: reuse done pages (unless `force`) and active batches, create batches
    for the rest. Wait on exactly `wait_parse_ids` (GET ?ids=...)."""
    doc_ref = _ref(body.doc_ref)
    submit: SubmitParse = await cases.submit_parse()
    try:
        submitted = await submit.ref(
            doc_ref,
            body.tier,
            page_range_of(body.page_range),
            file_type=body.file_type,
            force=body.force,
            caller=caller.caller,
        )
    except UnknownDocument as error:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(error)) from None
    except PageRangeOutOfBounds as error:
        raise _unprocessable(str(error)) from None
    except ParseError as error:  # cannot count its pages, or not a type we parse
        raise _unprocessable(error.reason) from None
    return response_view(submitted.response)


@router.get("", response_model=ParseBatchesView | CoverageView, responses=CONFLICT)
async def parses(
    cases: UseCasesDep,
    caller: Annotated[Principal, Depends(principal)],
    ids: Annotated[
        str | None, Query(max_length=8000, description="Batch ids, comma separated.")
    ] = None,
    doc_ref: Annotated[
        str | None,
        Query(min_length=1, max_length=1300, description=DOC_REF_HELP, examples=[DOC_REF]),
    ] = None,
    tier: Annotated[ParseTier, Query(examples=["basic"])] = ParseTier.BASIC,
    page_range: Annotated[str | None, Query(pattern=RANGE_PATTERN, max_length=RANGE_CHARS)] = None,
) -> ParseBatchesView | CoverageView:
    """`ids=12,13`: those batches (status, pages, error, done_at); a user token gets only
    those of bytes its user holds. `doc_ref=...&tier=...[&page_range=...]`: the document's
    coverage at that tier (404 when nothing is known)."""
    reader: ReadParse = await cases.read_parse()
    if (ids is None) == (doc_ref is None):
        raise _unprocessable("give either ids or doc_ref")
    if ids is not None:
        if not IDS.match(ids):
            raise _unprocessable("ids: comma-separated batch ids")
        parts = ids.split(",")
        if len(parts) > MAX_IDS:
            raise _unprocessable(f"ids: at most {MAX_IDS}")
        wanted = [_batch_id(part) for part in parts]
        listed = await reader.batches(wanted, caller=caller.caller)
        return ParseBatchesView(parses=[batch_view(b) for b in listed])
    if doc_ref is None:  # unreachable after the either/or check; narrows the type
        raise _unprocessable("give either ids or doc_ref")
    ref = _ref(doc_ref)
    pages = page_range_of(page_range)
    sha256 = await _sha256(cases, ref, caller)
    try:
        found = await reader.coverage(sha256, tier, pages, caller=caller.caller)
    except PageRangeOutOfBounds as error:
        raise _unprocessable(str(error)) from None
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "nothing is known of it at this tier")
    used = list(dict.fromkeys(found.done[p] for p in sorted(found.done)))
    return CoverageView(
        sha256=sha256,
        tier=tier.value,
        page_range=str(found.page_range),
        status=found.status.value,
        missing_pages=found.missing,
        parses=[batch_view(b) for b in (*used, *found.active)],
    )


async def _sha256(cases: UseCases, ref: str, caller: Principal) -> str:
    submit: SubmitParse = await cases.submit_parse()
    try:
        return await submit.sha256_for(ref, caller=caller.caller)
    except UnknownDocument as error:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(error)) from None


@router.get("/markdown", response_model=MarkdownView, responses=CONFLICT)
async def markdown(
    cases: UseCasesDep,
    caller: Annotated[Principal, Depends(principal)],
    doc_ref: Annotated[
        str, Query(min_length=1, max_length=1300, description=DOC_REF_HELP, examples=[DOC_REF])
    ],
    tier: Annotated[ParseTier, Query(examples=["basic"])] = ParseTier.BASIC,
    page_range: Annotated[str | None, Query(pattern=RANGE_PATTERN, max_length=RANGE_CHARS)] = None,
) -> MarkdownView:
    """The cached Markdown, per page from the newest done batch (404 when nothing is known,
    409 if pages are missing)."""
    ref = _ref(doc_ref)
    asked = page_range_of(page_range)  # a bad range is refused before the object is fetched
    sha256 = await _sha256(cases, ref, caller)
    reader: ReadParse = await cases.read_parse()
    known = await reader.known(sha256, tier, caller=caller.caller)
    try:
        found = await reader.coverage(sha256, tier, asked, caller=caller.caller, known=known)
    except PageRangeOutOfBounds as error:
        raise _unprocessable(str(error)) from None
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "nothing is known of it at this tier")
    pages = found.page_range
    try:
        cached = await reader.markdown(sha256, tier, pages, caller=caller.caller, known=known)
    except NotCached as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    except PageRangeOutOfBounds as error:
        raise _unprocessable(str(error)) from None
    return MarkdownView(
        sha256=sha256,
        tier=tier.value,
        page_range=str(pages),
        markdown=cached.markdown,
        pages=list(cached.pages),
        parse_ids=list(cached.batch_ids),
    )


adr_router = APIRouter(prefix="/parses", include_in_schema=False)
"""The same operations at the design record's own paths (`POST /parses`, `GET /parses?ids=…`), for
producers written against the ADR; documented once, under /api/v1/parses."""
for _route in router.routes:
    if isinstance(_route, APIRoute):
        adr_router.add_api_route(
            _route.path.removeprefix(router.prefix),
            _route.endpoint,
            methods=sorted(_route.methods or ()),
            response_model=_route.response_model,
            responses=_route.responses,
        )
