"""FastAPI dependencies: the typed Entry and UseCases of the running app (from app.state).

A route declares `cases: UseCasesDep` and awaits the use case it calls in its body (`await
cases.list_runs()`): building a use case opens its resources, so that comes after the
route's own checks and inside its own error handling (`/metrics` answers when the database
does not).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request

from ragline.adapters.inbound.entry import Entry
from ragline.application.use_cases import UseCases


def entry_of_app(app: FastAPI) -> Entry:
    """The Entry `create_app` stored (app.state is untyped: checked here, once)."""
    found = app.state.entry
    if not isinstance(found, Entry):
        raise RuntimeError("the app was not made by create_app (no Entry in app.state)")
    return found


def entry(request: Request) -> Entry:
    return entry_of_app(request.app)


def use_cases(request: Request) -> UseCases:
    return entry(request).use_cases


EntryDep = Annotated[Entry, Depends(entry)]
UseCasesDep = Annotated[UseCases, Depends(use_cases)]
