"""Document metadata in the application: setting it (`SetDocumentMetadata`) and keeping the
indexes' copies of it current (`labels_of`, `catch_up`, used by the indexing stages)."""

from ragline.application.metadata.labels import catch_up, labels_of
from ragline.application.metadata.set_metadata import (
    MetadataConflict,
    SetDocumentMetadata,
)

__all__ = ["MetadataConflict", "SetDocumentMetadata", "catch_up", "labels_of"]
