"""Driver errors turned into the port's errors, so callers never catch SQLAlchemy types."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from ragline.application.ports.repositories.errors import DuplicateTaskId, PersistenceError


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Any SQLAlchemy error inside becomes PersistenceError (chained, for the traceback)."""
    try:
        yield
    except PersistenceError:
        raise
    except SQLAlchemyError as error:
        cause = getattr(error, "orig", None) or error
        raise PersistenceError(f"{what} failed: {type(cause).__name__}") from error


@contextmanager
def unique_task_id(task_id: str) -> Iterator[None]:
    """An IntegrityError inside (the unique task_id) becomes DuplicateTaskId."""
    try:
        yield
    except IntegrityError as error:
        raise DuplicateTaskId(task_id) from error
