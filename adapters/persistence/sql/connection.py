"""The connection a unit of work holds while it is open, shared by its repositories."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, Union

from ragline.adapters.persistence.sql.sqlite_connection import InlineConnection
from ragline.application.ports.repositories.errors import PersistenceError

if TYPE_CHECKING:  # imported only where an asyncio driver is used (engine.py)
    from sqlalchemy.ext.asyncio import AsyncConnection

# Long IN lists are sent in slices: SQLite caps bound parameters, and huge statements are
# slow to compile everywhere.
IN_LIST_SLICE = 500


# On SQLite the unit of work holds an InlineConnection: the same interface, no asyncio layer.
SqlConnection: TypeAlias = Union["AsyncConnection", InlineConnection]


class ConnectionSlot:
    """Holds the open connection; repositories ask for it at each call."""

    def __init__(self) -> None:
        self._conn: SqlConnection | None = None

    @property
    def conn(self) -> SqlConnection:
        if self._conn is None:
            raise PersistenceError("the unit of work is not open: use it inside `async with`")
        return self._conn

    def attach(self, conn: SqlConnection | None) -> None:
        self._conn = conn
