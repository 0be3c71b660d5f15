"""Document metadata in the application: the indexing stages' and chunk edits' side of it
(`labels_of`, `catch_up`), so every index's copy stays current. Setting it is a documents
use case (`ragline.application.documents.SetDocumentMetadata`)."""

from ragline.application.metadata.labels import catch_up, labels_of

__all__ = ["catch_up", "labels_of"]
