"""Keyword (BM25) index port, fed by the PRETOKENIZE plan (KEYWORD_INDEXING) and searched.

Every write and query is scoped by user_id + dataset_id: one tenant never sees another's docs.
Tokens are decided by the application's Tokenizer; the index never re-analyses them.
Each doc carries its document's metadata; `search`'s `where` is applied by the engine while
it ranks (never a post-filter), and `relabel_document` replaces a document's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import attrs

from ragline.domain.metadata import DocumentMetadata, MetadataFilter


class KeywordIndexError(Exception):
    """Base class for keyword index failures."""


class KeywordIndexUnavailable(KeywordIndexError):
    """The engine cannot be reached or opened."""


class KeywordWriteFailed(KeywordIndexError):
    """A write or delete was refused or only partly applied."""


@attrs.frozen
class KeywordDoc:
    """One chunk as the keyword index stores it."""

    chunk_id: str
    doc_id: str
    user_id: str
    dataset_id: str
    parent_id: str | None
    tokens: Sequence[str]
    payload: Mapping[str, str] = attrs.field(factory=dict)
    metadata: DocumentMetadata = attrs.field(factory=DocumentMetadata)


@attrs.frozen
class KeywordHit:
    chunk_id: str
    doc_id: str
    score: float
    payload: Mapping[str, str] = attrs.field(factory=dict)


class KeywordIndex(Protocol):
    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> int:
        """Remove every chunk of one document in one scope; returns how many were removed."""
        ...

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        """Remove these chunks in one scope (absent ids are no error); unsearchable on
        return."""
        ...

    async def retire_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        """Remove these chunks in one scope, soon rather than now: for entries nothing can
        show any more (a swapped-out lineage, whose rows are gone), so an engine whose commit
        is dear may carry the delete in its next commit. They are gone from search once any
        `write` that starts after this call has returned, and once `close()` has; an engine
        that defers also commits them on its own within seconds. Absent ids are no error."""
        ...

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        """Index (or replace, by chunk_id within the scope) the docs; searchable on return.

        All-or-nothing per call as far as the engine allows; raises KeywordWriteFailed.
        """
        ...

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        """Replace the metadata of every chunk of one document in one scope (tokens and
        payload unchanged), searchable on return; raises KeywordWriteFailed."""
        ...

    async def search(
        self,
        user_id: str,
        dataset_id: str,
        tokens: Sequence[str],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[KeywordHit]:
        """BM25 hits within one scope among the chunks `where` keeps, best first; no tokens
        gives no hits."""
        ...

    async def close(self) -> None: ...
