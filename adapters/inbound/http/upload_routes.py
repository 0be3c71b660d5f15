"""Upload a file into a dataset: the bytes go to object storage under the caller's own prefix,
with a key ragline chooses, and the ordinary parse task runs on them
(docs/operations.md#uploads).

The file part is copied in 1 MiB blocks to a private temporary file, counted as it comes
(past `RAGLINE_UPLOAD_MAX_MB`: 413, the file removed, nothing stored), then streamed to the
object store; the temporary file is removed whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import tempfile
from typing import Annotated

import anyio
from fastapi import (
    APIRouter,
    Depends,
    File,
    Form,
    Header,
    HTTPException,
    Path,
    Response,
    UploadFile,
    status,
)
from pydantic import BaseModel, Field

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import UseCasesDep
from ragline.adapters.inbound.http.document_routes import UserQuery
from ragline.adapters.inbound.http.problems import PROBLEM_RESPONSES, Problem
from ragline.application.uploads import (
    BadUpload,
    IdempotencyConflict,
    UnsupportedUpload,
    Upload,
    UploadAccepted,
    UploadTooLarge,
)
from ragline.domain.metadata import DocumentMetadata, MetadataError

router = APIRouter(prefix="/api/v1", tags=["documents"], responses=PROBLEM_RESPONSES)

BLOCK = 1 << 20


def _problem(description: str) -> dict[str, object]:
    return {
        "model": Problem,
        "content": {"application/problem+json": {}},
        "description": description,
    }


UPLOAD_RESPONSES: dict[int | str, dict[str, object]] = {
    413: _problem("The file is larger than RAGLINE_UPLOAD_MAX_MB; nothing was stored"),
    415: _problem("The bytes are not a type ragline parses, or not the type the name says"),
}


class Uploaded(BaseModel):
    task_id: str = Field(examples=["upload-1b2c3d4e5f6a7"])
    doc_id: str = Field(description="The document (original_file_id); name it to re-upload.")
    dataset_id: str
    file_type: str = Field(description="As sniffed from the bytes.")
    source_object_key: str = Field(description="Where ragline stored the bytes.")
    run: str = Field(description="The run to follow (also the Location header).")
    replayed: bool = Field(description="True: an earlier upload's answer (same Idempotency-Key).")


async def _spool(file: UploadFile, limit: int) -> pathlib.Path:
    """The part's bytes in a private temporary file; UploadTooLarge past `limit` (removed)."""
    handle, name = tempfile.mkstemp(prefix="ragline-upload-")
    path = pathlib.Path(name)
    seen = 0
    try:
        with os.fdopen(handle, "wb") as out:
            while block := await file.read(BLOCK):
                seen += len(block)
                if seen > limit:
                    raise UploadTooLarge(limit)
                await anyio.to_thread.run_sync(out.write, block)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


@router.post(
    "/datasets/{dataset_id}/documents",
    response_model=Uploaded,
    status_code=202,
    responses=UPLOAD_RESPONSES,
)
async def upload_document(
    cases: UseCasesDep,
    response: Response,
    dataset_id: Annotated[
        str, Path(min_length=1, max_length=19, pattern=r"^[1-9][0-9]*$", examples=["2001"])
    ],
    file: Annotated[UploadFile, File(description="The document: any type ragline parses.")],
    caller: Annotated[Principal, Depends(principal)],
    user_id: UserQuery = None,
    doc_id: Annotated[
        str | None,
        Form(
            pattern=r"^[1-9][0-9]{0,18}$",
            description="Re-upload this document (a new version); omitted: a new document.",
        ),
    ] = None,
    metadata: Annotated[
        str | None,
        Form(
            max_length=16_384,
            description="The document's typed metadata as a JSON object (the same values as "
            "PUT /api/v1/documents/{doc_id}/metadata), stored before its run so every index "
            "is labelled with it; omitted: the document keeps what it has.",
            examples=['{"author": "Ann", "year": 2021, "published": {"date": "2024-05-01"}}'],
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=128,
            description="Same key, same caller, same bytes: the first answer again, no second "
            "task; the same key with other bytes: 422.",
        ),
    ] = None,
) -> Uploaded:
    """Store the file under the caller's own prefix (`<user_id>/uploads/…`, a key ragline
    chooses: the file's name is kept for display only) and run the ordinary parse task on
    it; 202 with the task id and `Location` of its run (`GET /api/v1/runs/{task_id}`). The
    type is sniffed from the bytes (415 when unsupported or not what the name says). A
    re-upload (`doc_id`) replaces the document's chunks when the new version gets through
    parsing; one that fails before that leaves the old version answering
    (docs/operations.md#uploads)."""
    user = caller.acting_user(user_id)
    labels = _metadata(metadata)
    upload_case = await cases.upload_document()
    try:
        path = await _spool(file, upload_case.max_bytes)
    except UploadTooLarge as error:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(error)) from None
    try:
        asked = Upload(
            user_id=user,
            dataset_id=str(dataset_id),
            filename=file.filename or "",
            path=path,
            doc_id=doc_id,
            idempotency_key=idempotency_key,
            metadata=labels,
        )
        accepted: UploadAccepted = await upload_case(caller.caller, asked)
    except UploadTooLarge as error:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(error)) from None
    except UnsupportedUpload as error:
        raise HTTPException(status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, str(error)) from None
    except (IdempotencyConflict, BadUpload) as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    run = f"/api/v1/runs/{accepted.task_id}"
    response.headers["Location"] = run
    return Uploaded(
        task_id=accepted.task_id,
        doc_id=accepted.doc_id,
        dataset_id=str(dataset_id),
        file_type=accepted.file_type,
        source_object_key=accepted.source_object_key,
        run=run,
        replayed=accepted.replayed,
    )


def _metadata(text: str | None) -> DocumentMetadata | None:
    """The form field's JSON, checked before the file is stored: a bad value is 422."""
    if text is None:
        return None
    try:
        return DocumentMetadata.from_plain(json.loads(text))
    except (ValueError, MetadataError) as error:  # JSONDecodeError is a ValueError
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"metadata: {error}") from None
