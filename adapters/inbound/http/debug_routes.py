"""The three debug endpoints of docs/design/0005-wire-contract.md, at exactly its paths."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Body, Depends, File, Form, HTTPException, Request, UploadFile, status

from ragline.adapters.inbound.http.auth import Principal, principal
from ragline.adapters.inbound.http.dependencies import EntryDep, UseCasesDep
from ragline.adapters.inbound.http.problems import PROBLEM_JSON, PROBLEM_RESPONSES, Problem
from ragline.adapters.inbound.http.schemas import (
    Extracted,
    ExtractFromObject,
    Published,
    RawTaskMessage,
    Submitted,
    seed_example,
)
from ragline.adapters.inbound.http.work_gate import BUSY, gate_of
from ragline.adapters.wire_format.json import command_of
from ragline.application.debug import ExtractedMarkdown, ExtractionFailed, ExtractMarkdown
from ragline.application.ports.parser import PdfParserBackend
from ragline.application.runs import TaskIdTaken
from ragline.contracts.wire import ParseTask

router = APIRouter(prefix="/api/v1", tags=["debug"], responses=PROBLEM_RESPONSES)

FIRST_PARSE = seed_example("parse_task.first_parse.json")
TAKEN: dict[int | str, dict[str, object]] = {
    409: {
        "model": Problem,
        "content": {PROBLEM_JSON: {}},
        "description": "The task_id is already another task's",
    }
}
RETRY = seed_example("parse_task.retry.json")


@router.post(
    "/parser/task/submit",
    response_model=Submitted,
    status_code=status.HTTP_202_ACCEPTED,
    responses=TAKEN,
)
async def submit_task(
    cases: UseCasesDep,
    task: Annotated[
        ParseTask,
        Body(openapi_examples={"first parse": {"value": FIRST_PARSE}, "retry": {"value": RETRY}}),
    ],
    caller: Annotated[Principal, Depends(principal)],
) -> Submitted:
    """Accept a ParseTask, put it on the configured task topic, answer with its task_id.
    A user token submits for itself only, naming only objects under its own `<user_id>/`
    prefix of the tenant buckets (403 otherwise, nothing published; docs/security.md). 409
    when the task_id is already another task's (task_ids are global; 'taken' is all it
    says)."""
    submit = await cases.submit_task()
    try:
        task_id: str = await submit(caller.caller, command_of(task))
    except TaskIdTaken as error:
        raise HTTPException(status.HTTP_409_CONFLICT, str(error)) from None
    return Submitted(task_id=task_id, routing_key=task.routing_key)


@router.post("/mq/send/parse-task", response_model=Published, status_code=status.HTTP_202_ACCEPTED)
async def send_parse_task(
    request: Request,
    entry: EntryDep,
    message: Annotated[RawTaskMessage, Body(openapi_examples={"seed": {"value": FIRST_PARSE}})],
    caller: Annotated[Principal, Depends(principal)],
) -> Published:
    """Publish a ParseTask message exactly as given, as the admin side would (service tokens
    only): the worker decides what it is, answering FAILED INVALID_TASK_CONTEXT or
    dead-lettering it as it does for any producer. The routing key is its `file_type`.
    Without tokens the default user may too, with a readable body's object references
    checked as a submit's (403)."""
    if not caller.is_service and not request.app.state.tokens.open:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "raw messages need a service token")
    body = await request.body()
    key = message.file_type
    publish = await entry.use_cases.publish_task_message()
    await publish(caller.caller, body, key)
    settings = entry.settings()
    return Published(topic=settings.parse_task_topic, routing_key=key, bytes=len(body))


@router.post("/parser/extract_sync", response_model=Extracted, responses=BUSY)
async def extract_sync(
    request: Request,
    cases: UseCasesDep,
    caller: Annotated[Principal, Depends(principal)],
    file: Annotated[UploadFile | None, File(description="The file to parse.")] = None,
    file_type: Annotated[str | None, Form(max_length=16)] = None,
    pdf_parser_backend: Annotated[str, Form(pattern="^(auto|naive|opendataloader)$")] = "auto",
    source: Annotated[
        str | None,
        Form(
            description="Instead of a file, a stored object: `bucket/key` (the key's extension "
            "is the file type unless `file_type` says), or a JSON ExtractFromObject "
            '`{"bucket", "object_key", "file_type", "pdf_parser_backend"}`.',
            examples=["tolink-rag-docs/raw/2026/05/16/doc-001.pdf"],
        ),
    ] = None,
) -> Extracted:
    """Parse an uploaded file (`file`), or a stored object (`source`: `bucket/key` or a JSON
    ExtractFromObject), to Markdown and return it (nothing is stored). A user token names
    only its own `<user_id>/` keys of the tenant buckets (403 otherwise). Bounded like
    CLEANING: the upload by the request size limit, the parse by the parser's time, memory
    and output limits."""
    extract = await cases.extract_markdown()
    async with gate_of(request).slot():  # the parse waits on the sandbox in a thread
        return await _extract(extract, caller, file, file_type, pdf_parser_backend, source)


async def _extract(
    extract: ExtractMarkdown,
    caller: Principal,
    file: UploadFile | None,
    file_type: str | None,
    pdf_parser_backend: str,
    source: str | None,
) -> Extracted:
    try:
        if file is not None:
            kind = file_type or (file.filename or "").rsplit(".", 1)[-1]
            data = await file.read()
            result: ExtractedMarkdown = await extract.from_bytes(
                data, kind, PdfParserBackend(pdf_parser_backend)
            )
        elif source is not None:
            target = _object_of(source, file_type, pdf_parser_backend)
            result = await extract.from_object(
                caller.caller,
                target.bucket,
                target.object_key,
                target.file_type,
                PdfParserBackend(target.pdf_parser_backend),
            )
        else:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "give a file or a source")
    except ExtractionFailed as failure:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(failure)) from None
    return Extracted(
        markdown=result.markdown,
        title=result.title,
        page_count=result.page_count,
        warnings=list(result.warnings),
        chars=len(result.markdown),
    )


def _object_of(source: str, file_type: str | None, backend: str) -> ExtractFromObject:
    """`source` as a JSON ExtractFromObject, or `bucket/key` with the form's file_type (else
    the key's extension) and backend; 422 `source: ...` when it is neither."""
    try:
        if source.lstrip().startswith("{"):
            return ExtractFromObject.model_validate(json.loads(source))
        bucket, _, key = source.partition("/")
        name = key.rsplit("/", 1)[-1]
        kind = file_type or (name.rsplit(".", 1)[-1].lower() if "." in name else "")
        if not kind:
            raise ValueError("the key has no extension: give file_type")
        return ExtractFromObject(
            bucket=bucket, object_key=key, file_type=kind, pdf_parser_backend=backend
        )
    except ValueError as error:
        detail = " ".join(str(error).split())
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"source: {detail}") from None
