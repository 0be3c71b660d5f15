"""ParseTaskCommand: one request to parse one uploaded file and index it
(docs/design/0005-wire-contract.md).

The fields mirror the ParseTask message one to one; the wire adapter has already checked
their types, so a command is well-typed but not yet validated against itself
(`ragline.application.pipeline.validation` does that and answers INVALID_TASK_CONTEXT).
"""

from __future__ import annotations

import re
from enum import StrEnum

import attrs

from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import TaskIdentity

_RETRY_SUFFIX = re.compile(r"-r(\d+)$")


class PdfParserBackend(StrEnum):
    """Which engine turns a PDF into Markdown (a task field; the Parser port takes it too)."""

    MINERU = "mineru"  # remote service; the pipeline sends it a URL (direct pull)
    OPENDATALOADER = "opendataloader"  # the opendataloader-pdf Java CLI, needs `java`
    NAIVE = "naive"  # pypdfium2 text layer + heading/paragraph recovery
    AUTO = "auto"  # the best available engine, plus OCR of every page without a text layer


class TriggerMode(StrEnum):
    UPLOAD_AUTO = "upload_auto"
    MANUAL_RETRY = "manual_retry"


class TaskIssuer(StrEnum):
    """Who asked for a run, so who is owed its result: the producer (the business back
    end, or `ragline ingest` acting as one) gets a ParseResult on the result topic; work
    ragline issues itself (an operator's retry, a re-index) gets none, since the producer
    never issued that task_id (docs/wire-contracts.md)."""

    PRODUCER = "producer"
    RAGLINE = "ragline"


def next_retry_task_id(task_id: str) -> str:
    """The one retry-id rule: `x` -> `x-r1`, `x-r1` -> `x-r2`, so the retries of one file
    stay recognisable as one chain."""
    match = _RETRY_SUFFIX.search(task_id)
    if match is None:
        return f"{task_id}-r1"
    return f"{task_id[: match.start()]}-r{int(match.group(1)) + 1}"


@attrs.frozen(kw_only=True)
class ParseTaskCommand:
    """One ParseTask, as the application handles it."""

    task_id: str
    original_file_id: int
    document_parse_task_id: int
    user_id: int
    dataset_id: int
    file_type: str
    source_bucket: str
    source_object_key: str
    source_filename: str
    md_bucket: str
    md_object_key: str
    trigger_mode: TriggerMode = TriggerMode.UPLOAD_AUTO
    pdf_parser_backend: PdfParserBackend = PdfParserBackend.MINERU
    docling_force_ocr: bool | None = None
    image_bucket: str | None = None
    image_prefix: str | None = None
    is_retry: bool = False
    previous_task_id: str | None = None
    issued_by: TaskIssuer = TaskIssuer.PRODUCER
    metadata: DocumentMetadata | None = None
    """ragline's extension: the document's metadata, stored when a producer's new task is
    accepted (None: keep what the document has). Retries and re-indexes never apply it."""

    @property
    def identity(self) -> TaskIdentity:
        """The ids its run is stored under. The run keeps each id as its decimal text (the
        run tables' and the Java views' columns); `int()` gives the wire's value back
        exactly (docs/wire-contracts.md, Ids inside)."""
        return TaskIdentity(
            task_id=self.task_id,
            original_file_id=str(self.original_file_id),
            document_parse_task_id=str(self.document_parse_task_id),
            user_id=str(self.user_id),
            dataset_id=str(self.dataset_id),
            file_type=self.file_type,
        )

    @property
    def owes_result(self) -> bool:
        """Whether a ParseResult is published for this task's run."""
        return self.issued_by is TaskIssuer.PRODUCER

    @property
    def routing_key(self) -> str:
        """Task messages are routed by file type."""
        return self.file_type

    def retry_of(self, previous_task_id: str) -> ParseTaskCommand:
        """The one retry-task builder: this file's task again, as a manual retry of the
        failed run `previous_task_id` (whose successor id it takes)."""
        return attrs.evolve(
            self,
            task_id=next_retry_task_id(previous_task_id),
            is_retry=True,
            previous_task_id=previous_task_id,
            trigger_mode=TriggerMode.MANUAL_RETRY,
        )

    def issued(self, issuer: TaskIssuer) -> ParseTaskCommand:
        return attrs.evolve(self, issued_by=issuer)

    def with_task_id(self, task_id: str) -> ParseTaskCommand:
        return attrs.evolve(self, task_id=task_id)


BODY_TEXT_KEEP = 8192
"""How much of a body the parsed log keeps for the operator when no valid task is stored."""


def body_text(body: bytes) -> str:
    """The start of a message body, as text, for the parsed log."""
    return body[:BODY_TEXT_KEEP].decode("utf-8", errors="replace")


@attrs.frozen(kw_only=True)
class UnreadableTask:
    """A task body that is not a valid ParseTask, with what could still be read from it.

    `task_id` is None when not even that could be read (the message is then dead-lettered);
    otherwise the run is FAILED INVALID_TASK_CONTEXT and the salvaged ids name the file in
    its result. `reason` is `<kind>: <detail>`, short and loggable; `body_text` is the start
    of the body, kept in the parsed log for the operator. An id that could not be read as
    a 64-bit integer is 0, the value its FAILED result carries (the wire has no "unknown").
    """

    task_id: str | None
    reason: str
    body_text: str = ""
    original_file_id: int = 0
    document_parse_task_id: int = 0
    user_id: int = 0
    dataset_id: int = 0
    file_type: str = ""

    def identity(self, task_id: str) -> TaskIdentity:
        """The ids its FAILED run is stored under (as a task's, `ParseTaskCommand.identity`)."""
        return TaskIdentity(
            task_id=task_id,
            original_file_id=str(self.original_file_id),
            document_parse_task_id=str(self.document_parse_task_id),
            user_id=str(self.user_id),
            dataset_id=str(self.dataset_id),
            file_type=self.file_type,
        )


MARKDOWN_PASSTHROUGH_TYPES: frozenset[str] = frozenset({"md", "markdown"})


def is_markdown_source(task: ParseTaskCommand) -> bool:
    """md/markdown sources are not converted and not copied
    (docs/design/0001-pipeline-contract.md)."""
    return task.file_type.lower() in MARKDOWN_PASSTHROUGH_TYPES
