"""The indexing stages' side of document metadata: read it before writing points, and catch
up after, so a `PUT .../metadata` racing a run never leaves stale labels in an index.

The PUT commits the new metadata (version v+1) and then relabels the indexes; a stage reads
(metadata, v) before it writes and the version again after. If the version moved, the PUT
committed while the stage wrote, so its relabel may have run before some of the stage's
points existed: the stage relabels with the newest metadata itself. If it did not move,
any later PUT commits after the stage's writes and its own relabel covers them.

A run's indexing stages follow one another, so one stage's read after its writes is also a
read before the next stage's writes: `labels_of(..., known=)` starts from it instead of
reading again (four reads a run instead of six; each is a unit of work of its own).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.metadata import DocumentMetadata

NONE = StoredMetadata(DocumentMetadata(), 0)


async def labels_of(
    uow_factory: UnitOfWorkFactory, scope: DocumentScope, known: StoredMetadata | None = None
) -> StoredMetadata:
    """The document's metadata and version (version 0, empty: none was ever set); `known`, a
    read this run made earlier, when there is one."""
    if known is not None:
        return known
    async with uow_factory() as uow:
        stored = await uow.documents.metadata_of(scope)
    return stored or NONE


async def catch_up(
    uow_factory: UnitOfWorkFactory,
    scope: DocumentScope,
    written: StoredMetadata,
    relabel: Callable[[DocumentMetadata], Awaitable[None]],
) -> StoredMetadata:
    """After writing points labelled with `written`: relabel if the metadata changed since.
    Returns the metadata the index now holds (read after the writes)."""
    newest = await labels_of(uow_factory, scope)
    if newest.version != written.version:
        await relabel(newest.metadata)
    return newest
