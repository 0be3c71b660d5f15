"""Driver errors turned into the port's errors, so callers never catch SQLAlchemy types."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import (
    DisconnectionError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ragline.application.ports.repositories.errors import (
    DatabaseUnavailable,
    DuplicateTaskId,
    PersistenceError,
)

# SQLite raises OperationalError for a broken statement or schema too: those are bugs, not
# an outage, and holding the backlog for them would hold it forever.
_NOT_AN_OUTAGE = ("no such table", "no such column", "syntax error", "has no column")


def unavailable(error: SQLAlchemyError) -> bool:
    """Whether `error` says the database did not answer (as opposed to refused a request)."""
    if isinstance(error, DisconnectionError | PoolTimeout | InterfaceError):
        return True
    if isinstance(error, OperationalError):
        text = str(error.orig if error.orig is not None else error).lower()
        return not any(marker in text for marker in _NOT_AN_OUTAGE)
    return bool(getattr(error, "connection_invalidated", False))


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """Any SQLAlchemy error inside becomes PersistenceError (chained, for the traceback);
    one that says the database did not answer becomes DatabaseUnavailable."""
    try:
        yield
    except PersistenceError:
        raise
    except SQLAlchemyError as error:
        cause = getattr(error, "orig", None) or error
        detail = f"{what} failed: {type(cause).__name__}"
        if unavailable(error):
            raise DatabaseUnavailable(detail) from error
        raise PersistenceError(detail) from error
    except OSError as error:  # a driver that lets a socket error through unwrapped
        raise DatabaseUnavailable(f"{what} failed: {type(error).__name__}") from error


@contextmanager
def unique_task_id(task_id: str) -> Iterator[None]:
    """An IntegrityError inside (the unique task_id) becomes DuplicateTaskId."""
    try:
        yield
    except IntegrityError as error:
        raise DuplicateTaskId(task_id) from error
