"""A document's chunks: list them (parents with their children, paged by cursor) and switch
one off or on, or replace a child's text (docs/operations.md#a-documents-chunks).

A user token acts for its own user whatever `user_id` says; another user's document or chunk
is not found (404) and nothing changes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Query, status
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.document_routes import BUSY, DatasetQuery, UserQuery
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES
from ragline.application.documents import (
    MAX_PARENTS_PER_PAGE,
    ChunkChange,
    ChunkConflict,
    ChunkNotFound,
    ChunkPage,
    DocumentBusy,
    DocumentNotFound,
    NotEditable,
)
from ragline.application.ports.repositories.chunks import ChunkRecord

router = APIRouter(prefix="/api/v1", tags=["documents"], responses=PROBLEM_RESPONSES)

EXAMPLE_DOC = "12345"
EXAMPLE_CHUNK = "539b3933c70d0d797a461691bc84d644b686b4e12a6854c216ef306cb3ae21c1"
"""The first child of the seed's document 12345 (ids are derived from tenant, document,
lineage, i.e. the seed's task id, span and text), so the generated example runs as written
(tests/docs)."""


class ChunkView(BaseModel):
    chunk_id: str
    parent_id: str | None
    order_index: int
    text: str
    section_path: list[str]
    span_start: int = Field(description="Where the chunk starts in the document's Markdown.")
    span_end: int
    node_type: str | None
    dense_status: str | None = Field(description="Children only: PENDING … SUCCESS, FAILED.")
    sparse_status: str | None
    enabled: bool = Field(description="False: switched off; no retriever returns it.")
    edited: bool = Field(description="Its text was replaced through PATCH.")


class ChunkFamilyView(BaseModel):
    parent: ChunkView
    children: list[ChunkView]


class ChunkPageView(BaseModel):
    doc_id: str
    parents: list[ChunkFamilyView]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: last.")


class ChunkPatch(BaseModel):
    """`enabled` switches the chunk off/on in every retriever; `text` replaces a child's text
    (re-embedded and re-indexed). At least one of them."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"enabled": True},
                {"enabled": False},
                {"text": "Movable type was in use in China by the eleventh century."},
            ]
        },
    )

    enabled: bool | None = None
    text: str | None = Field(None, min_length=1, max_length=20_000)

    @model_validator(mode="after")
    def _something(self) -> ChunkPatch:
        if self.enabled is None and self.text is None:
            raise ValueError("give enabled, text or both")
        return self


def chunk_view(c: ChunkRecord) -> ChunkView:
    return ChunkView(
        chunk_id=c.chunk_id,
        parent_id=c.parent_id,
        order_index=c.order_index,
        text=c.text,
        section_path=list(c.section_path),
        span_start=c.span_start,
        span_end=c.span_end,
        node_type=c.node_type,
        dense_status=None if c.dense_status is None else c.dense_status.value,
        sparse_status=None if c.sparse_status is None else c.sparse_status.value,
        enabled=c.enabled,
        edited=c.edited,
    )


def _id(example: str) -> object:
    return Path(min_length=1, max_length=64, pattern=r"^[^\s/]+$", examples=[example])


@router.get("/documents/{doc_id}/chunks", response_model=ChunkPageView)
async def list_chunks(
    cases: UseCasesDep,
    doc_id: Annotated[str, _id(EXAMPLE_DOC)],
    dataset_id: DatasetQuery,
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
    cursor: Annotated[str | None, Query(max_length=12, pattern=r"^\d+$")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PARENTS_PER_PAGE)] = 20,
) -> ChunkPageView:
    """The document's chunks in order: each parent with its children (section path, spans in
    the Markdown, index statuses, `enabled`, `edited`), `limit` parents a page; follow
    `next_cursor`."""
    user = caller.acting_user(user_id)
    listing = await cases.list_chunks()
    try:
        page: ChunkPage = await listing(user, dataset_id, doc_id, cursor=cursor, limit=limit)
    except DocumentNotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such document") from None
    except ValueError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    return ChunkPageView(
        doc_id=page.doc_id,
        parents=[
            ChunkFamilyView(
                parent=chunk_view(f.parent), children=[chunk_view(c) for c in f.children]
            )
            for f in page.families
        ],
        next_cursor=page.next_cursor,
    )


@router.patch("/documents/{doc_id}/chunks/{chunk_id}", response_model=ChunkView, responses=BUSY)
async def patch_chunk(
    cases: UseCasesDep,
    doc_id: Annotated[str, _id(EXAMPLE_DOC)],
    chunk_id: Annotated[str, _id(EXAMPLE_CHUNK)],
    dataset_id: DatasetQuery,
    caller: Annotated[Principal, Depends(principal)],
    patch: Annotated[ChunkPatch, Body()],
    user_id: UserQuery = None,
) -> ChunkView:
    """Switch the chunk off (`{"enabled": false}`: deleted from the dense, sparse and BM25
    indexes, so no search returns it) or on again (indexed again), or replace a child's text
    (`{"text": "…"}`: re-embedded and re-indexed in all three; `edited` becomes true). A
    repeat of the same request finishes one that failed midway. A re-index or new upload of
    the document cuts fresh chunks and drops edits (docs/operations.md). 409 while a run is
    in progress; 422 for a parent's text."""
    user = caller.acting_user(user_id)
    edit = await cases.edit_chunk()
    change = ChunkChange(enabled=patch.enabled, text=patch.text)
    try:
        chunk = await edit(user, dataset_id, doc_id, chunk_id, change)
    except (DocumentNotFound, ChunkNotFound):
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chunk") from None
    except (DocumentBusy, ChunkConflict) as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    except NotEditable as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    return chunk_view(chunk)
