"""What one run carries from stage to stage (in memory only; the truth is in the store)."""

from __future__ import annotations

import attrs

from ragline.application.pipeline.outputs import StageOutputs
from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.tasks import ParseTaskCommand
from ragline.application.tasks.parse_task import is_markdown_source
from ragline.domain.parse_run import MarkdownLocation, ParseRun, Stage


def markdown_location(task: ParseTaskCommand) -> MarkdownLocation:
    """Where this task's Markdown lives: the source itself for md/markdown, else md_*."""
    if is_markdown_source(task):
        return MarkdownLocation(task.source_bucket, task.source_object_key)
    return MarkdownLocation(task.md_bucket, task.md_object_key)


def document_scope(task: ParseTaskCommand) -> DocumentScope:
    """The tenant + document every chunk and index write of this task is scoped by.

    The document is the producer's original file: a retry rebuilds the same document.
    """
    return DocumentScope(str(task.user_id), str(task.dataset_id), str(task.original_file_id))


@attrs.define
class RunContext:
    """One run in flight: the message, the aggregate, and the outputs earlier stages gave
    (typed, each stage reading only what it declared: see outputs.py)."""

    task: ParseTaskCommand
    run: ParseRun
    parsed_log_id: int
    scope: DocumentScope
    outputs: StageOutputs = attrs.field(factory=StageOutputs)
    # The stage the orchestrator runs after the current one, and the stage already started
    # by its predecessor's success (one unit of work for "N done, N+1 started").
    following: Stage | None = None
    started_ahead: Stage | None = None
    # The document's metadata as an indexing stage last read it after its writes (the next
    # such stage writes with it: application/metadata/labels.py).
    labels: StoredMetadata | None = None

    @property
    def task_id(self) -> str:
        return self.task.task_id
