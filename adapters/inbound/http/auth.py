"""Bearer tokens -> principals (`RAGLINE_API_TOKENS`).

A token maps to one user_id (that user's data only, whatever a request body says) or to `*`
(a trusted service — the Java back end — acting for the user a request names). With no
tokens configured the server acts as the embedded default user and binds loopback only.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import Annotated

import attrs
from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragline.application.access import Caller
from ragline.application.secrets import remember_secrets

SERVICE = "*"


class TokenConfigError(ValueError):
    """RAGLINE_API_TOKENS is neither a JSON object of token -> principal nor a file of one."""


@attrs.frozen
class Principal:
    """Who calls. `user_id` None: a trusted service acting for the user a request names."""

    user_id: str | None
    may_configure_models: bool

    @property
    def is_service(self) -> bool:
        return self.user_id is None

    @property
    def caller(self) -> Caller:
        """The caller as the application's trust rules know it."""
        return Caller(self.user_id)

    def acting_user(self, requested: str | int | None) -> str:
        """The user a request acts for: a user principal is always itself; a service must
        name one."""
        if self.user_id is not None:
            return self.user_id
        if requested is None or str(requested).strip() == "":
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT, "user_id is required for a service token"
            )
        return str(requested)

    def may_see(self, owner_user_id: str) -> bool:
        return self.user_id is None or self.user_id == owner_user_id


@attrs.frozen
class ApiTokens:
    """The token table; empty means open on loopback as `default_user`."""

    principals: dict[str, str]
    default_user: str = "1"

    @classmethod
    def parse(cls, configured: str | None, default_user: str = "1") -> ApiTokens:
        """A JSON object (token -> user_id or "*"), or the path of a file holding one."""
        if configured is None or not configured.strip():
            return cls({}, default_user)
        text = configured.strip()
        if not text.startswith("{"):
            path = Path(text)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as error:
                raise TokenConfigError(f"RAGLINE_API_TOKENS file {path}: {error}") from None
        try:
            table = json.loads(text)
        except ValueError as error:
            raise TokenConfigError(f"RAGLINE_API_TOKENS is not JSON: {error}") from None
        if not isinstance(table, dict) or not table:
            raise TokenConfigError("RAGLINE_API_TOKENS must be a non-empty JSON object")
        principals: dict[str, str] = {}
        for token, principal in table.items():
            if not isinstance(token, str) or len(token) < 16:
                raise TokenConfigError("every token must be a string of 16 characters or more")
            if not isinstance(principal, str | int) or isinstance(principal, bool):
                raise TokenConfigError(f"the principal of a token must be a user_id or {SERVICE!r}")
            principals[token] = str(principal)
        remember_secrets(*principals)  # a token is never shown, even if an error quotes it
        return cls(principals, default_user)

    @property
    def open(self) -> bool:
        return not self.principals

    def principal_for(self, authorization: str | None) -> Principal | None:
        if self.open:
            return Principal(self.default_user, may_configure_models=True)
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        offered = authorization[7:].strip()
        for token, principal in self.principals.items():
            if hmac.compare_digest(token.encode(), offered.encode()):
                if principal == SERVICE:
                    return Principal(None, may_configure_models=True)
                return Principal(principal, may_configure_models=False)
        return None


BEARER = HTTPBearer(auto_error=False, description="A token of RAGLINE_API_TOKENS.")


def principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
) -> Principal:
    """FastAPI dependency: the caller, or 401."""
    tokens: ApiTokens = request.app.state.tokens
    offered = f"Bearer {credentials.credentials}" if credentials is not None else None
    found = tokens.principal_for(offered)
    if found is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "a valid bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return found
