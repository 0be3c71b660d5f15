"""LoopbackGuard: the no-token mode (RAGLINE_API_TOKENS empty) answers loopback callers only.

Binding 127.0.0.1 is not enough: a web page the user opens can reach it. Through DNS
rebinding (its own name resolving to 127.0.0.1) the page's requests carry its name in `Host`,
so a Host that is not a loopback name is refused (421). A page may also send requests
straight to 127.0.0.1 (a form post, a fetch without CORS): the browser marks them with an
`Origin` (or `Sec-Fetch-Site: cross-site`), so a state-changing request (any method but
GET, HEAD, OPTIONS) from an origin that is not loopback is refused (403). Non-browser clients
(curl, the CLI, scripts) send neither header and are not affected.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from ragline.adapters.inbound.http.problems import problem

LOOPBACK_NAMES = frozenset({"localhost"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback_host(host: str) -> bool:
    """`localhost`, `127.0.0.1`, `[::1]` (any loopback address), with or without a port."""
    name = host.strip().lower()
    if name.startswith("["):  # [v6]:port
        name = name[1 : name.find("]")] if "]" in name else ""
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    name = name.rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback_origin(origin: str) -> bool:
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and is_loopback_host(parts.netloc)


class LoopbackGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host")
        if host is not None and not is_loopback_host(host):
            refusal = problem(
                421,
                "Misdirected Request",
                "without API tokens this server answers only a loopback Host "
                "(localhost, 127.0.0.1, [::1])",
            )
            await refusal(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS and self._cross_site(headers):
            refusal = problem(
                403, "Forbidden", "without API tokens a cross-site request may not change state"
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _cross_site(headers: dict[str, str]) -> bool:
        if headers.get("sec-fetch-site", "").strip().lower() == "cross-site":
            return True
        origin = headers.get("origin")
        return origin is not None and not is_loopback_origin(origin)
