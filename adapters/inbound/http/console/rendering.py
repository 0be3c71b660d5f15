"""The console's Jinja2 templates (package data beside this module, autoescaped) and the
one way a page is rendered: with the caller, its CSRF token and the navigation."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import jinja2
from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from ragline.adapters.inbound.http.auth import Principal
from ragline.adapters.inbound.http.console.session import csrf_token, tokens_of

HERE = Path(__file__).resolve().parent
TEMPLATES = Jinja2Templates(
    env=jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
)
STATIC = HERE / "static"


def url_part(value: object) -> str:
    """A value quoted for one path segment or query value (`/`, `?`, `&`, `#` included)."""
    return quote(str(value), safe="")


TEMPLATES.env.filters["part"] = url_part

# A page loads nothing but this server's own stylesheet; no script, no frame, no form
# that posts elsewhere.
POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def page(
    request: Request,
    name: str,
    caller: Principal | None,
    status_code: int = 200,
    **context: object,
) -> Response:
    """Render template `name` for `caller` (None: the login form)."""
    response = TEMPLATES.TemplateResponse(
        request,
        name,
        {
            "caller": caller,
            "csrf": csrf_token(request),
            "open_mode": tokens_of(request).open,
            **context,
        },
        status_code=status_code,
    )
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    return response


def refusal(request: Request, caller: Principal | None, status_code: int, reason: str) -> Response:
    """An error page (403, 404, 409, 503...) with the reason in words."""
    return page(request, "error.html", caller, status_code, reason=reason, code=status_code)
