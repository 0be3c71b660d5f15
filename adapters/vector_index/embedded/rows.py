"""Row-level SQL of the embedded index that no query path shares: payload JSON columns, a
tenant's removal from one space (from the base space: of its dense vectors only), the
largest scope (what `ragline doctor` sizes)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from ragline.adapters.vector_index.embedded.store import transaction
from ragline.domain.metadata import DocumentMetadata

_BUMP_BOTH = (
    "UPDATE scopes SET dense_generation = dense_generation + 1,"
    " sparse_generation = sparse_generation + 1 WHERE id = ?"
)
_BUMP_DENSE = "UPDATE scopes SET dense_generation = dense_generation + 1 WHERE id = ?"


def meta_json(metadata: DocumentMetadata) -> str | None:
    if not metadata:
        return None
    return json.dumps(metadata.indexed(), ensure_ascii=False, separators=(",", ":"))


def extra_json(extra: Mapping[str, str]) -> str | None:
    if not extra:
        return None
    return json.dumps(dict(extra), ensure_ascii=False, separators=(",", ":"))


def user_points_removed(connection: sqlite3.Connection, user_id: str) -> list[int]:
    """Delete every point of `user_id`; the scope ids touched (their cached arrays go stale:
    both generations are bumped)."""
    with transaction(connection, write=True):
        scopes = _scopes_of(connection, user_id)
        for scope_id in scopes:
            connection.execute("DELETE FROM points WHERE scope_id = ?", (scope_id,))
            connection.execute(_BUMP_BOTH, (scope_id,))
        return scopes


def user_dense_removed(connection: sqlite3.Connection, user_id: str) -> list[int]:
    """Clear the dense vector of every point of `user_id`, deleting the points left with no
    vector; their sparse vectors stay (the VectorSpaces rule for generation 0). The scope ids
    touched: only their dense arrays go stale (the sparse postings do not change)."""
    with transaction(connection, write=True):
        scopes = _scopes_of(connection, user_id)
        for scope_id in scopes:
            connection.execute(
                "DELETE FROM points WHERE scope_id = ? AND sparse IS NULL", (scope_id,)
            )
            connection.execute(
                "UPDATE points SET dense = NULL WHERE scope_id = ? AND dense IS NOT NULL",
                (scope_id,),
            )
            connection.execute(_BUMP_DENSE, (scope_id,))
        return scopes


def _scopes_of(connection: sqlite3.Connection, user_id: str) -> list[int]:
    rows = connection.execute("SELECT id FROM scopes WHERE user_id = ?", (user_id,)).fetchall()
    return [int(row[0]) for row in rows]


def largest_scope_points(connection: sqlite3.Connection) -> int:
    """Dense points in the scope that holds most; 0 when empty."""
    row = connection.execute(
        "SELECT count(*) AS n FROM points WHERE dense IS NOT NULL"
        " GROUP BY scope_id ORDER BY n DESC LIMIT 1"
    ).fetchone()
    return int(row[0]) if row else 0
