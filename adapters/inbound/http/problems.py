"""Every error as one documented shape: RFC 9457 problem details (application/problem+json).

`errors` names each offending field for a 422; a refused object reference is a 403 whose
detail is the ReferenceRefused message; a 500 never leaks an exception's text, and no detail
shows a filesystem path of the server (`without_paths`, the last guard: errors are worded
without them where they are raised); every detail passes the secret mask (a detail may
quote a remote answer).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from ragline.application.access import ReferenceRefused
from ragline.application.error_text import without_paths
from ragline.application.ports.messaging import MessageBusError
from ragline.application.search.use_case import SearchUnavailable
from ragline.application.secrets import masked

log = logging.getLogger("ragline.http")

PROBLEM_JSON = "application/problem+json"


class FieldError(BaseModel):
    field: str
    message: str


class Problem(BaseModel):
    """An error response (RFC 9457)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    errors: list[FieldError] | None = None


PROBLEM_RESPONSES: dict[int | str, dict[str, object]] = {
    code: {"model": Problem, "content": {PROBLEM_JSON: {}}, "description": title}
    for code, title in (
        (401, "No valid bearer token"),
        (403, "The token may not do this"),
        (404, "Not found (or not yours)"),
        (413, "Request body too large"),
        (422, "Invalid request"),
    )
}

UNAVAILABLE_RESPONSE: dict[int | str, dict[str, object]] = {
    503: {
        "model": Problem,
        "content": {PROBLEM_JSON: {}},
        "description": "No retriever could answer (their engines are out of reach)",
    }
}


def problem(
    status: int, title: str, detail: str | None = None, errors: list[FieldError] | None = None
) -> JSONResponse:
    shown = None if detail is None else masked(without_paths(detail))
    body = Problem(title=title, status=status, detail=shown, errors=errors)
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=status, media_type=PROBLEM_JSON
    )


_TITLES = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def install(app: FastAPI) -> None:
    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        limit = request.scope.get("ragline.body_too_large")
        if limit is not None:  # the body was cut off while it was being parsed
            return problem(413, "Payload Too Large", f"request bodies are limited to {limit} bytes")
        response = problem(
            error.status_code,
            _TITLES.get(error.status_code, "Error"),
            str(error.detail) if error.detail else None,
        )
        for name, value in (error.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(ReferenceRefused)
    async def refused(request: Request, error: ReferenceRefused) -> JSONResponse:
        """A reference the caller may not name (docs/security.md), from whichever use case
        checked it: 403 with `<field>: <reason>`."""
        return problem(403, "Forbidden", str(error))

    @app.exception_handler(SearchUnavailable)
    async def unavailable(request: Request, error: SearchUnavailable) -> JSONResponse:
        """Every retriever failed (docs/retrieval.md, degraded search): a 503 the client may
        retry, naming the retrievers, never an engine's error text."""
        response = problem(503, "Service Unavailable", str(error))
        response.headers["Retry-After"] = "5"
        return response

    @app.exception_handler(MessageBusError)
    async def bus_refused(request: Request, error: MessageBusError) -> JSONResponse:
        """The broker would not take a task (unreachable, or no queue bound to the topic yet:
        an unroutable publish): the client may repeat the request, which is idempotent on its
        task id or Idempotency-Key; an upload's bytes are already stored."""
        log.warning("the message bus refused a publish on %s: %s", request.url.path, error)
        detail = masked(without_paths(str(error)))[:300]
        response = problem(
            503,
            "Service Unavailable",
            f"the message bus could not take the task ({detail}); repeat the request",
        )
        response.headers["Retry-After"] = "5"
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        errors = [
            FieldError(
                field=".".join(str(part) for part in item.get("loc", ()) if part != "body")
                or "body",
                message=masked(without_paths(str(item.get("msg", "invalid")))),
            )
            for item in error.errors()
        ]
        detail = "; ".join(f"{e.field}: {e.message}" for e in errors)[:1000]
        return problem(422, "Unprocessable Content", detail, errors=errors)

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, error: ClientDisconnect) -> JSONResponse:
        """The client left (or was cut off by a deadline) while its body was read: nobody
        hears this answer, and it is not a server error."""
        log.info("client gone before its request body arrived: %s", request.url.path)
        return problem(408, "Request Timeout", "the request did not arrive in time")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return problem(500, "Internal Server Error", "see the server log")
