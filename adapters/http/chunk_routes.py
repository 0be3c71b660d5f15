"""Chunk preview: the parent/child cut of a text or a file, before anything is indexed."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile, status

from ragline.adapters.http.auth import Principal, principal
from ragline.adapters.http.container_calls import use_case
from ragline.adapters.http.problems import PROBLEM_RESPONSES
from ragline.adapters.http.schemas import ChunkPreviewText
from ragline.application.chunking import UnknownPlanError
from ragline.application.chunking.preview import preview_json
from ragline.application.debug import ExtractionFailed
from ragline.domain.chunking import ChunkingResult

router = APIRouter(prefix="/api/v1/chunks", tags=["chunking"], responses=PROBLEM_RESPONSES)


@router.post("/preview")
async def preview_text(
    request: Request,
    asked: ChunkPreviewText,
    caller: Annotated[Principal, Depends(principal)],
) -> dict[str, Any]:
    """How Markdown or plain text would be cut (`ragline chunk --json`'s object)."""
    preview = await use_case(request, "preview_chunks")
    try:
        result: ChunkingResult = preview.text(asked.text, asked.plan)
    except UnknownPlanError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    return preview_json(result)


@router.post("/preview/file")
async def preview_file(
    request: Request,
    file: Annotated[UploadFile, File(description="md, txt, html, docx or pdf")],
    caller: Annotated[Principal, Depends(principal)],
    plan: Annotated[str, Form(max_length=64)] = "default",
    file_type: Annotated[str | None, Form(max_length=16)] = None,
) -> dict[str, Any]:
    """How a file of any supported format would be cut (parsed first, as CLEANING does)."""
    preview = await use_case(request, "preview_chunks")
    kind = file_type or (file.filename or "").rsplit(".", 1)[-1]
    try:
        result: ChunkingResult = await preview.file(await file.read(), kind, plan)
    except (UnknownPlanError, ExtractionFailed) as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    return preview_json(result)
