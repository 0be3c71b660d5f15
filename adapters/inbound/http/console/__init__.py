"""The operator console at /console: server-rendered pages over the same use cases, tokens
and tenancy as the API (docs/operations.md, Console). No script and nothing from the
internet: the templates and the stylesheet are package data."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

from ragline.adapters.inbound.http.console import (
    chunks_page,
    documents_pages,
    login_pages,
    outbox_pages,
    runs_pages,
    search_page,
)
from ragline.adapters.inbound.http.console.rendering import STATIC, refusal
from ragline.adapters.inbound.http.console.session import (
    LoginRequired,
    Refused,
    new_key,
    principal_of,
)


def install(app: FastAPI) -> None:
    """Mount the console's pages, its stylesheet and its two answers (log in; refused)."""
    app.state.console_key = new_key()
    for module in (
        login_pages,
        runs_pages,
        outbox_pages,
        search_page,
        documents_pages,
        chunks_page,
    ):
        app.include_router(module.router)
    app.mount("/console/static", StaticFiles(directory=STATIC), name="console-static")

    async def login_required(request: Request, _: Exception) -> Response:
        return RedirectResponse("/console/login", status_code=303)

    async def refused(request: Request, error: Exception) -> Response:
        reason = error.reason if isinstance(error, Refused) else "refused"
        return refusal(request, principal_of(request), 403, reason)

    app.add_exception_handler(LoginRequired, login_required)
    app.add_exception_handler(Refused, refused)


__all__ = ["install"]
