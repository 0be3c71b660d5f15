"""ListChunks: a document's chunks as its owner sees them, parents with their children.

Paged by parent (keyset on order_index: the cursor is the last parent's position), so a
document of 10,000 parents is read a page at a time. Scoped by the user asked for: another
user's document, or one never run, is DocumentNotFound (the HTTP API answers 404).
"""

from __future__ import annotations

import attrs

from ragline.application.documents.use_cases import DocumentNotFound
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWorkFactory

MAX_PARENTS_PER_PAGE = 100


@attrs.frozen
class ChunkFamily:
    parent: ChunkRecord
    children: tuple[ChunkRecord, ...]


@attrs.frozen
class ChunkPage:
    doc_id: str
    families: tuple[ChunkFamily, ...]
    next_cursor: str | None
    """Pass it back as `cursor` for the next page; None: this was the last."""


def _after(cursor: str | None) -> int:
    if cursor is None or cursor == "":
        return -1
    if not cursor.isdigit() or len(cursor) > 12:
        raise ValueError("cursor is not one this listing gave")
    return int(cursor)


class ListChunks:
    def __init__(self, uow_factory: UnitOfWorkFactory) -> None:
        self._uow_factory = uow_factory

    async def __call__(
        self,
        user_id: str,
        dataset_id: str,
        doc_id: str,
        *,
        cursor: str | None = None,
        limit: int = 20,
    ) -> ChunkPage:
        """ValueError for a cursor it never gave or a limit outside 1..MAX_PARENTS_PER_PAGE."""
        if not 1 <= limit <= MAX_PARENTS_PER_PAGE:
            raise ValueError(f"1 <= limit <= {MAX_PARENTS_PER_PAGE}")
        after = _after(cursor)
        scope = DocumentScope(user_id, dataset_id, doc_id)
        async with self._uow_factory() as uow:
            if await uow.documents.latest_for_document(user_id, dataset_id, doc_id) is None:
                raise DocumentNotFound(f"no document {doc_id} in dataset {dataset_id}")
            parents = await uow.chunks.list_parents(scope, after_order_index=after, limit=limit + 1)
            shown = parents[:limit]
            kids = await uow.chunks.children_of(scope, [p.chunk_id for p in shown])
        by_parent: dict[str, list[ChunkRecord]] = {p.chunk_id: [] for p in shown}
        for kid in kids:
            by_parent[kid.parent_id or ""].append(kid)
        more = len(parents) > limit
        return ChunkPage(
            doc_id,
            tuple(ChunkFamily(p, tuple(by_parent[p.chunk_id])) for p in shown),
            str(shown[-1].order_index) if more else None,
        )
