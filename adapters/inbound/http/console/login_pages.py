"""Logging in to the console with an API token, and out again."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from ragline.adapters.inbound.http.console.rendering import page
from ragline.adapters.inbound.http.console.session import (
    COOKIE,
    PATH,
    cookie_value,
    principal_of,
    same_origin,
    tokens_of,
)

router = APIRouter(prefix="/console", include_in_schema=False)

SESSION_SECONDS = 8 * 3600


@router.get("/login")
async def login_form(request: Request) -> Response:
    if principal_of(request) is not None:
        return RedirectResponse("/console/runs", status_code=303)
    return page(request, "login.html", None)


@router.post("/login")
async def login(request: Request, token: Annotated[str, Form(max_length=512)] = "") -> Response:
    """A token of RAGLINE_API_TOKENS becomes the session cookie (HttpOnly, SameSite=Strict)."""
    tokens = tokens_of(request)
    if tokens.open:
        return RedirectResponse("/console/runs", status_code=303)
    if not same_origin(request) or tokens.principal_for(f"Bearer {token.strip()}") is None:
        return page(request, "login.html", None, 401, failed=True)
    response = RedirectResponse("/console/runs", status_code=303)
    response.set_cookie(
        COOKIE,
        cookie_value(token.strip()),
        max_age=SESSION_SECONDS,
        path=PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    """Clears the cookie (no CSRF token needed: being logged out is harmless)."""
    response = RedirectResponse("/console/login", status_code=303)
    response.delete_cookie(COOKIE, path=PATH, httponly=True, samesite="strict")
    return response
