"""A dataset's documents: listing them with their newest run and chunk counts, and deleting
one from every store ragline wrote it to."""

from ragline.application.documents.use_cases import (
    DeletedDocument,
    DeleteDocument,
    DocumentBusy,
    DocumentList,
    DocumentNotFound,
    DocumentSummary,
    ListDocuments,
)

__all__ = [
    "DeleteDocument",
    "DeletedDocument",
    "DocumentBusy",
    "DocumentList",
    "DocumentNotFound",
    "DocumentSummary",
    "ListDocuments",
]
