"""Parsed logs: each task as received, and where its Markdown went."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import attrs

from ragline.application.tasks import StoredTask
from ragline.domain.parse_run import MarkdownLocation


@attrs.frozen
class ParsedLog:
    """The snapshot of one task as received: the task and where its Markdown went.

    `id` is the store's integer key, sent back as `document_parsed_log_id`. `task` is the
    task as the edge decoded it (or why its body was no task), kept so a later retry or
    re-index can start from it and so `ragline status` can show it; the store keeps it as
    a plain record (`task_record`: canonical JSON in the SQL store).
    """

    id: int
    task_id: str
    task: StoredTask
    created_at: datetime
    retry_of_task_id: str | None = None
    parsed_bucket: str | None = None
    parsed_object_key: str | None = None
    parse_backend: str | None = None
    """The engine that really parsed the source (e.g. ``naive+tesseract``, ``mineru``)."""
    parse_warnings: tuple[str, ...] = ()
    """The parser's warnings (fallbacks, OCR'd pages, cut page ranges), in order."""
    source: MarkdownLocation | None = None
    """The object the task names as its source (None: a task that was not valid, whose
    references mean nothing). A delete never removes an object a live document's run names
    as its source (`ParseRunRepository.objects_in_use`)."""


class ParsedLogRepository(Protocol):
    async def add(
        self,
        task_id: str,
        task: StoredTask,
        created_at: datetime,
        retry_of_task_id: str | None = None,
        source: MarkdownLocation | None = None,
    ) -> ParsedLog:
        """Insert under the unique task_id (DuplicateTaskId if present) and return the row."""
        ...

    async def get(self, task_id: str) -> ParsedLog | None: ...

    async def set_parsed_location(self, task_id: str, bucket: str, object_key: str) -> None:
        """Record where the Markdown was written (after CLEANING uploads it)."""
        ...

    async def set_parse_outcome(
        self, task_id: str, backend: str, warnings: tuple[str, ...]
    ) -> None:
        """Record the engine that really parsed and its warnings (PersistenceError if the
        row is missing)."""
        ...
