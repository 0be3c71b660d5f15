"""A dataset's documents: listing them with their newest run and chunk counts, and deleting
one from every store ragline wrote it to, re-indexing one from its stored Markdown."""

from ragline.application.documents.chunk_edits import (
    ChunkChange,
    ChunkConflict,
    ChunkNotFound,
    EditChunk,
    NotEditable,
)
from ragline.application.documents.chunks import (
    MAX_PARENTS_PER_PAGE,
    ChunkFamily,
    ChunkPage,
    ListChunks,
)
from ragline.application.documents.use_cases import (
    DeletedDocument,
    DeleteDocument,
    DocumentBusy,
    DocumentList,
    DocumentNotFound,
    DocumentSummary,
    ListDocuments,
    NotReindexable,
    ReindexDocument,
    next_reindex_task_id,
)

__all__ = [
    "MAX_PARENTS_PER_PAGE",
    "ChunkChange",
    "ChunkConflict",
    "ChunkFamily",
    "ChunkNotFound",
    "ChunkPage",
    "DeleteDocument",
    "DeletedDocument",
    "DocumentBusy",
    "DocumentList",
    "DocumentNotFound",
    "DocumentSummary",
    "EditChunk",
    "ListChunks",
    "ListDocuments",
    "NotEditable",
    "NotReindexable",
    "ReindexDocument",
    "next_reindex_task_id",
]
