"""Asking the container of the running app for a use case (FastAPI dependency helpers)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from ragline.application.health import obtain


async def use_case(request: Request, name: str) -> Any:
    """The container's provider `name`, built (and awaited when it opens resources)."""
    return await obtain(getattr(request.app.state.container, name))
