"""Chunk preview: the parent/child cut of a text or a file, before anything is indexed."""

from __future__ import annotations

import json
from typing import Annotated

import anyio.to_thread
from fastapi import (
    APIRouter,
    Depends,
    File,
    Form,
    HTTPException,
    Request,
    Response,
    UploadFile,
    status,
)

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES
from ragline.adapters.inbound.http.schemas import ChunkPreviewText
from ragline.adapters.inbound.http.work_gate import BUSY, gate_of
from ragline.application.chunking import UnknownPlanError
from ragline.application.chunking.preview import PreviewChunks, preview_json
from ragline.application.debug import ExtractionFailed
from ragline.domain.chunking import ChunkingResult

router = APIRouter(
    prefix="/api/v1/chunks", tags=["chunking"], responses={**PROBLEM_RESPONSES, **BUSY}
)


def encoded(result: ChunkingResult) -> Response:
    """The preview object as JSON (encoded where the cut was made, off the event loop)."""
    body = json.dumps(preview_json(result), ensure_ascii=False, separators=(",", ":"))
    return Response(body.encode("utf-8"), media_type="application/json")


def cut_text(preview: PreviewChunks, text: str, plan: str) -> Response:
    return encoded(preview.text(text, plan))


@router.post("/preview", response_model=dict[str, object])
async def preview_text(
    request: Request,
    cases: UseCasesDep,
    asked: ChunkPreviewText,
    caller: Annotated[Principal, Depends(principal)],
) -> Response:
    """How Markdown or plain text would be cut (`ragline chunk --json`'s object)."""
    preview = await cases.preview_chunks()
    try:
        return await gate_of(request).run(cut_text, preview, asked.text, asked.plan)
    except UnknownPlanError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None


@router.post("/preview/file", response_model=dict[str, object])
async def preview_file(
    request: Request,
    cases: UseCasesDep,
    file: Annotated[UploadFile, File(description="md, txt, html, docx or pdf")],
    caller: Annotated[Principal, Depends(principal)],
    plan: Annotated[str, Form(max_length=64)] = "default",
    file_type: Annotated[str | None, Form(max_length=16)] = None,
) -> Response:
    """How a file of any supported format would be cut (parsed first, as CLEANING does)."""
    preview: PreviewChunks = await cases.preview_chunks()
    kind = file_type or (file.filename or "").rsplit(".", 1)[-1]
    async with gate_of(request).slot():
        try:
            result: ChunkingResult = await preview.file(await file.read(), kind, plan)
        except (UnknownPlanError, ExtractionFailed) as error:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
        return await anyio.to_thread.run_sync(encoded, result)
