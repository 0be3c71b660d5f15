"""Who is at the console: the API's own tokens, presented by a browser as a cookie.

The login form takes a token of RAGLINE_API_TOKENS and sets it (base64url, so any token's
characters survive cookie syntax) in an HttpOnly, SameSite=Strict cookie scoped to
/console (Secure when served over https); every page
resolves it with the API's `ApiTokens`, so a tenant token sees exactly what it sees through
the API. Without tokens (the loopback mode) no login is needed: the caller is the default
user, as for the API, and LoopbackGuard refuses other Hosts and cross-site writes.

CSRF: the cookie is SameSite=Strict (a cross-site form post carries no session), every
button is a POST form with a hidden token (an HMAC of the session under a key made at
start), and a POST whose Origin is not this server's is refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Form, Request

from ragline.adapters.inbound.http.auth import ApiTokens, Principal

COOKIE = "ragline_console"
PATH = "/console"


class LoginRequired(Exception):
    """No valid session: the handler answers with a redirect to the login form."""


class Refused(Exception):
    """A console write this caller may not do (a bad CSRF token, a foreign Origin, a tenant
    at an operator's button): the handler answers with a 403 page."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def new_key() -> bytes:
    """The CSRF key of one server process (sessions outlive it only by logging in again)."""
    return secrets.token_bytes(32)


def tokens_of(request: Request) -> ApiTokens:
    found = request.app.state.tokens
    if not isinstance(found, ApiTokens):
        raise RuntimeError("the app was not made by create_app (no ApiTokens in app.state)")
    return found


def cookie_value(token: str) -> str:
    """What the session cookie holds for `token`."""
    return base64.urlsafe_b64encode(token.encode()).decode("ascii")


def _token_in(value: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(value.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        return None


def session_value(request: Request) -> str:
    """What the session is keyed by: the cookie (its token), or "" in the no-token mode."""
    return request.cookies.get(COOKIE, "")


def principal_of(request: Request) -> Principal | None:
    tokens = tokens_of(request)
    if tokens.open:
        return tokens.principal_for(None)
    offered = _token_in(session_value(request))
    return tokens.principal_for(f"Bearer {offered}") if offered else None


def csrf_token(request: Request) -> str:
    key = request.app.state.console_key
    if not isinstance(key, bytes):
        raise RuntimeError("the console is not installed (no key in app.state)")
    return hmac.new(key, session_value(request).encode(), hashlib.sha256).hexdigest()


def viewer(request: Request) -> Principal:
    """FastAPI dependency of every console page: the caller, or a redirect to log in."""
    found = principal_of(request)
    if found is None:
        raise LoginRequired()
    return found


def same_origin(request: Request) -> bool:
    """No Origin (not a browser) or this server's own; "null" and any other origin refused."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return bool(host) and urlsplit(origin).netloc.lower() == host.lower()


def writer(request: Request, csrf: Annotated[str, Form(max_length=128)] = "") -> Principal:
    """FastAPI dependency of every console button: the caller, with its CSRF token checked."""
    caller = viewer(request)
    if not same_origin(request):
        raise Refused("a console button works only from this server's own pages")
    if not hmac.compare_digest(csrf.encode(), csrf_token(request).encode()):
        raise Refused("the form is stale or not this session's: reload the page")
    return caller


def operator(caller: Annotated[Principal, Depends(writer)]) -> Principal:
    """A button only the service token may press (the outbox holds every tenant's results)."""
    if not caller.is_service:
        raise Refused("the outbox needs the service token")
    return caller


Viewer = Annotated[Principal, Depends(viewer)]
Writer = Annotated[Principal, Depends(writer)]
Operator = Annotated[Principal, Depends(operator)]
