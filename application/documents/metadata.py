"""SetDocumentMetadata: replace a document's metadata, then relabel its points in the vector
and keyword indexes so every retriever filters on the new values.

The database is the truth: the new metadata is committed first (a compare-and-set on its
version), then both indexes are relabelled. If an index is out of reach the call fails
after the commit; the indexes keep the old labels until the same PUT is repeated (it is
idempotent) or the document is re-indexed. A run writing the document meanwhile catches up
by itself (application/metadata/labels.py).
"""

from __future__ import annotations

from ragline.application.access import Caller, owned_document
from ragline.application.documents.use_cases import DocumentNotFound
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.search.spaces import dense_indexes
from ragline.domain.metadata import DocumentMetadata

ATTEMPTS = 5  # compare-and-set rounds against concurrent PUTs of the same document


class MetadataConflict(RuntimeError):
    """Other writers kept winning the compare-and-set: ask again."""


class SetDocumentMetadata:
    def __init__(
        self, uow_factory: UnitOfWorkFactory, vectors: VectorIndex, keywords: KeywordIndex
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._keywords = keywords

    async def __call__(
        self,
        caller: Caller,
        user_id: str,
        dataset_id: str,
        doc_id: str,
        metadata: DocumentMetadata,
    ) -> StoredMetadata:
        for _ in range(ATTEMPTS):
            async with self._uow_factory() as uow:
                scope = await owned_document(uow, caller, user_id, dataset_id, doc_id)
                if scope is None:
                    raise DocumentNotFound(f"no document {doc_id} in dataset {dataset_id}")
                stored = await uow.documents.metadata_of(scope)
                version = stored.version if stored is not None else 0
                if await uow.documents.put_metadata(scope, metadata, expected_version=version):
                    await uow.commit()
                    break
        else:
            raise MetadataConflict(f"document {doc_id}: metadata changed under every attempt")
        for index in await dense_indexes(self._uow_factory, self._vectors, user_id):
            await index.relabel_document(user_id, dataset_id, doc_id, metadata)
        await self._keywords.relabel_document(user_id, dataset_id, doc_id, metadata)
        return StoredMetadata(metadata, version + 1)
