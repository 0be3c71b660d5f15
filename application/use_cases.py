"""UseCases: the typed face every driving adapter calls, one field per use case.

Bootstrap builds it from the composition root's container, so an entry point never names a
provider by string: a misspelt use case is a mypy error, not a run-time AttributeError. Each
field builds its use case when awaited (opening the resources it needs on first use), so a
command that only previews chunks opens no database and loads no model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from ragline.application.chunking.chunk_document import ChunkDocument
from ragline.application.chunking.preview import PreviewChunks
from ragline.application.debug import ExtractMarkdown, PublishTaskMessage, SubmitTask
from ragline.application.documents import (
    DeleteDocument,
    EditChunk,
    ListChunks,
    ListDocuments,
    ReindexDocument,
    SetDocumentMetadata,
)
from ragline.application.evaluation import EvaluateRetrieval
from ragline.application.health import CheckHealth
from ragline.application.ingest.use_case import IngestFiles
from ragline.application.outbox import ManageOutbox
from ragline.application.parsing import ParseBatchRunner, ReadParse, SubmitParse
from ragline.application.provisioning import ManageModelConfigs, ProvisionEmbedding
from ragline.application.redrive import RedriveTaskDeadLetters
from ragline.application.reembedding.loop import ReembeddingLoop
from ragline.application.reembedding.manage import ManageReembeddings
from ragline.application.runs import ListRuns, RetryRun
from ragline.application.search.use_case import HybridSearch
from ragline.application.uploads import UploadDocument

T = TypeVar("T")
Build = Callable[[], Awaitable[T]]
"""A use case built on demand: awaited, it opens what the use case needs and returns it."""


@attrs.frozen
class UseCases:
    """What the CLI, the HTTP API and the worker's operations routes may call."""

    ingest_files: Build[IngestFiles]
    provision_embedding: Build[ProvisionEmbedding]
    hybrid_search: Build[HybridSearch]
    evaluate_retrieval: Build[EvaluateRetrieval]
    list_runs: Build[ListRuns]
    retry_run: Build[RetryRun]
    manage_outbox: Build[ManageOutbox]
    redrive_tasks: Build[RedriveTaskDeadLetters]
    model_configs: Build[ManageModelConfigs]
    list_documents: Build[ListDocuments]
    delete_document: Build[DeleteDocument]
    reindex_document: Build[ReindexDocument]
    set_document_metadata: Build[SetDocumentMetadata]
    list_chunks: Build[ListChunks]
    edit_chunk: Build[EditChunk]
    upload_document: Build[UploadDocument]
    check_health: Build[CheckHealth]
    submit_task: Build[SubmitTask]
    publish_task_message: Build[PublishTaskMessage]
    extract_markdown: Build[ExtractMarkdown]
    preview_chunks: Build[PreviewChunks]
    submit_parse: Build[SubmitParse]
    read_parse: Build[ReadParse]
    parse_batch_runner: Build[ParseBatchRunner]
    manage_reembeddings: Build[ManageReembeddings]
    reembedding_loop: Build[ReembeddingLoop]
    """The background loop of `ragline worker`/`serve`, and `ragline models reembed run`."""
    chunk_document: Callable[[], ChunkDocument]
    """Pure CPU (no resources): the chunk plans a command may name, checked before it runs."""
