"""The HTTP driving adapter (FastAPI): `ragline serve`."""

from ragline.adapters.inbound.http.app import create_app, create_operations_app
from ragline.adapters.inbound.http.auth import ApiTokens, Principal, TokenConfigError

__all__ = ["ApiTokens", "Principal", "TokenConfigError", "create_app", "create_operations_app"]
