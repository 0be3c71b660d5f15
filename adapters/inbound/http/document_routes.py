"""A dataset's documents: list them with their state (their index owner's), newest run and
chunk counts; delete one from the chunk table, the vector and keyword indexes and the
Markdown store; re-index one from its stored Markdown; set its metadata (what search
filters on).

A user token acts for its own user whatever `user_id` says; another user's document is not
found (404).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.adapters.inbound.http.run_routes import run_view
from ragline.adapters.inbound.http.schemas import (
    ChunkCountsView,
    DeletedDocumentView,
    DocumentPageView,
    DocumentView,
    MetadataBody,
    MetadataView,
    Submitted,
    plain_metadata,
)
from ragline.application.documents import (
    DeletedDocument,
    DocumentBusy,
    DocumentList,
    DocumentNotFound,
    MetadataConflict,
    NotReindexable,
)
from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.metadata import DocumentMetadata, MetadataError

router = APIRouter(prefix="/api/v1", tags=["documents"], responses=PROBLEM_RESPONSES)

BUSY: dict[int | str, dict[str, object]] = {
    409: {
        "model": Problem,
        "content": {"application/problem+json": {}},
        "description": "A run is in progress, or nothing to re-index from",
    }
}


def _id(example: str) -> object:
    return Path(min_length=1, max_length=64, pattern=r"^[^\s/]+$", examples=[example])


DatasetQuery = Annotated[str, Query(min_length=1, max_length=64, examples=["2001"])]
UserQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=64,
        description="Required with a service token.",
        examples=["1001"],
    ),
]


@router.get("/datasets/{dataset_id}/documents", response_model=DocumentPageView)
async def list_documents(
    cases: UseCasesDep,
    dataset_id: Annotated[str, _id("2001")],
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=200)] = 50,
) -> DocumentPageView:
    """The dataset's documents in doc_id order. Each has `state`, the status of
    `indexed_run`: the run that owns its index (the newest SUCCESS run that got to
    CHUNKING, whose chunks are the live ones; else the newest run that got to CHUNKING),
    not the newest message; a refused retry or a new version that failed leaves a fully
    indexed document SUCCESS (the old version answers until a new one succeeds). Without
    such a run (`indexed_run` null) the state is `latest_run`'s. `latest_run` is the newest
    attempt, whatever it did; `chunks` counts the live chunk rows and how many are
    indexed."""
    user = caller.acting_user(user_id)
    listing: DocumentList = await (await cases.list_documents())(user, dataset_id, page, page_size)
    return DocumentPageView(
        documents=[
            DocumentView(
                doc_id=d.doc_id,
                state=d.state.value,
                indexed_run=None if d.indexed_run is None else run_view(d.indexed_run),
                latest_run=run_view(d.latest_run),
                chunks=ChunkCountsView(
                    parents=d.chunks.parents,
                    children=d.chunks.children,
                    dense_indexed=d.chunks.dense_indexed,
                    sparse_indexed=d.chunks.sparse_indexed,
                ),
            )
            for d in listing.documents
        ],
        total=listing.total,
        page=listing.page,
        page_size=listing.page_size,
    )


@router.delete("/documents/{doc_id}", response_model=DeletedDocumentView, responses=BUSY)
async def delete_document(
    cases: UseCasesDep,
    doc_id: Annotated[str, _id("12346")],
    dataset_id: DatasetQuery,
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
) -> DeletedDocumentView:
    """Delete the document's chunk rows, dense and sparse points, keyword docs and the
    Markdown ragline wrote (never a source, nor an object another live document names:
    docs/security.md). A failure midway answers 5xx and a repeat finishes the job; once
    done, the document is not found (404)."""
    user = caller.acting_user(user_id)
    delete = await cases.delete_document()
    try:
        done: DeletedDocument = await delete(user, dataset_id, doc_id)
    except DocumentNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such document") from None
    except DocumentBusy as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return DeletedDocumentView(
        doc_id=done.doc_id,
        chunks=done.chunks,
        keyword_docs=done.keyword_docs,
        markdown_deleted=done.markdown_deleted,
    )


@router.post(
    "/documents/{doc_id}/reindex", response_model=Submitted, status_code=202, responses=BUSY
)
async def reindex_document(
    cases: UseCasesDep,
    doc_id: Annotated[str, _id("12345")],
    dataset_id: DatasetQuery,
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
) -> Submitted:
    """Re-index the document from the Markdown stored by the run that owns its index (its
    newest run when none does): a new parse task (task_id `<that run>-x<N>`) that re-chunks
    and re-indexes that Markdown without parsing the source again; follow it with GET
    /api/v1/runs/{task_id}. It is ragline's own work: no ParseResult is published for it
    (docs/wire-contracts.md). 409 while a run is in
    progress or when no Markdown is stored; 403 when the stored Markdown or image prefix is
    not the token's to name (docs/security.md)."""
    user = caller.acting_user(user_id)
    reindex = await cases.reindex_document()
    try:
        task: ParseTaskCommand = await reindex(caller.caller, user, dataset_id, doc_id)
    except DocumentNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such document") from None
    except (DocumentBusy, NotReindexable) as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return Submitted(task_id=task.task_id, routing_key=task.routing_key)


@router.put("/documents/{doc_id}/metadata", response_model=MetadataView, responses=BUSY)
async def set_document_metadata(
    cases: UseCasesDep,
    doc_id: Annotated[str, _id("12345")],
    dataset_id: DatasetQuery,
    body: MetadataBody,
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
) -> MetadataView:
    """Replace the document's metadata (the whole set: a key left out is removed) and
    relabel its chunks in the vector and keyword indexes, so `filter` in POST
    /api/v1/search sees the new values. Stored first, then relabelled: a 5xx after the
    store leaves the indexes on the old values until the same PUT is repeated. Another
    tenant's document, or one that does not exist, is not found (404); 409 when concurrent
    writes kept winning."""
    user = caller.acting_user(user_id)
    try:
        metadata = DocumentMetadata.from_plain(plain_metadata(body.metadata))
    except MetadataError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    set_metadata = await cases.set_document_metadata()
    try:
        stored: StoredMetadata = await set_metadata(
            caller.caller, user, dataset_id, doc_id, metadata
        )
    except DocumentNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such document") from None
    except MetadataConflict as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return MetadataView(doc_id=doc_id, metadata=stored.metadata.as_plain(), version=stored.version)
