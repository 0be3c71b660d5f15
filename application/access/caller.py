"""Caller: who asks — one tenant (its user_id) or the trusted service.

The service is the business back end (the wire contract lets it name any object), the
operator's CLI and the broker's consumer; a tenant is a user token of the HTTP API.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Caller:
    user_id: str | None
    """None: the trusted service, acting for the user a request names."""

    @classmethod
    def service(cls) -> Caller:
        return cls(None)

    @classmethod
    def tenant(cls, user_id: str | int) -> Caller:
        text = str(user_id).strip()
        if not text:
            raise ValueError("a tenant has a user_id")
        return cls(text)

    @property
    def is_service(self) -> bool:
        return self.user_id is None

    def may_act_for(self, user_id: str | int) -> bool:
        """A tenant acts for itself only; the service for anyone."""
        return self.user_id is None or self.user_id == str(user_id)
