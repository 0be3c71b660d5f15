"""ParseTask: the message a business system drops on the task topic
(docs/design/0005-wire-contract.md).

Compatibility rules: new fields are always optional, unknown fields are ignored, old
messages keep parsing. Types are strict (no "12" -> 12, no 1 -> True) so that a producer
bug surfaces as INVALID_TASK_CONTEXT instead of being silently reinterpreted.
"""

from __future__ import annotations

import re
from datetime import date
from enum import StrEnum
from typing import Annotated, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic.config import JsonDict

NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]

FILE_TYPES: tuple[str, ...] = (
    "pdf", "docx", "html", "htm", "md", "markdown", "txt",
    "pptx", "xlsx", "csv", "tsv", "epub", "eml",
    "png", "jpg", "jpeg", "tif", "tiff",
)  # fmt: skip
"""The `file_type` values ragline parses (lower-case extension without the dot). The field
stays an open string: any other value is a valid message whose run fails at CLEANING with
UNSUPPORTED_FILE_TYPE, so a producer can route new types before ragline learns them."""
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
Long = Annotated[StrictInt, Field(ge=LONG_MIN, le=LONG_MAX)]
"""An id as the producer's database keeps it: a 64-bit signed integer (a Java long). Whether
it is a usable id (positive) is the pipeline's question (INVALID_TASK_CONTEXT)."""
TASK_ID_MAX_CHARS = 256
TaskId = Annotated[StrictStr, Field(min_length=1, max_length=TASK_ID_MAX_CHARS, pattern=r"\S")]
"""Idempotency key: 1-256 characters, not only whitespace."""


def _a_day(text: str) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise ValueError("a date is YYYY-MM-DD")
    date.fromisoformat(text)  # a real day (raises ValueError)
    return text


class MetadataDate(BaseModel):
    """A date metadata value: `{"date": "YYYY-MM-DD"}` (a bare string stays a string)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: Annotated[StrictStr, AfterValidator(_a_day)]


METADATA_KEY = r"^[a-z][a-z0-9_]{0,63}$"
MetadataString = Annotated[StrictStr, Field(max_length=256)]
MetadataNumber = Annotated[StrictInt | StrictFloat, Field(ge=-1e12, le=1e12, allow_inf_nan=False)]
MetadataValue = MetadataString | MetadataNumber | list[MetadataString] | MetadataDate
Metadata = Annotated[
    dict[Annotated[str, Field(pattern=METADATA_KEY)], MetadataValue], Field(max_length=32)
]
"""Bounded as `ragline.domain.metadata.DocumentMetadata` is (the domain checks again)."""


class TriggerMode(StrEnum):
    UPLOAD_AUTO = "upload_auto"
    MANUAL_RETRY = "manual_retry"


class TaskIssuer(StrEnum):
    PRODUCER = "producer"
    RAGLINE = "ragline"


class PdfParserBackend(StrEnum):
    MINERU = "mineru"
    OPENDATALOADER = "opendataloader"
    NAIVE = "naive"
    AUTO = "auto"


_RETRY_NEEDS_PREVIOUS: JsonDict = {
    "if": {"properties": {"is_retry": {"const": True}}, "required": ["is_retry"]},
    "then": {
        "required": ["previous_task_id"],
        "properties": {"previous_task_id": {"type": "string"}},
    },
}


class ParseTask(BaseModel):
    """One request to parse one uploaded file and index it."""

    model_config = ConfigDict(
        extra="ignore",
        frozen=True,
        title="ParseTask",
        json_schema_extra=_RETRY_NEEDS_PREVIOUS,
    )

    task_id: TaskId = Field(description="Unique id chosen by the producer; idempotency key.")
    original_file_id: Long = Field(description="Primary key of the producer's original file.")
    document_parse_task_id: Long = Field(
        description="Primary key of the producer's parse-file row (document_parse_file.id)."
    )
    user_id: Long = Field(description="Owner of the file.")
    dataset_id: Long = Field(description="Dataset the file belongs to.")
    file_type: NonEmptyStr = Field(
        description=(
            "The file's extension, lower case, without the dot; the routing key. Parsed: "
            + ", ".join(FILE_TYPES)
            + ". Any other value fails the run with UNSUPPORTED_FILE_TYPE."
        ),
        examples=list(FILE_TYPES),
    )
    source_bucket: NonEmptyStr = Field(description="Object-storage bucket of the source file.")
    source_object_key: NonEmptyStr = Field(description="Object-storage key of the source file.")
    source_filename: StrictStr = Field(description="File name as uploaded by the user.")
    md_bucket: StrictStr = Field(
        description="Bucket for the produced Markdown (unused for md/markdown passthrough)."
    )
    md_object_key: StrictStr = Field(
        description="Key for the produced Markdown (unused for md/markdown passthrough)."
    )
    trigger_mode: TriggerMode = Field(
        default=TriggerMode.UPLOAD_AUTO, description="upload_auto (default) or manual_retry."
    )
    pdf_parser_backend: PdfParserBackend = Field(
        default=PdfParserBackend.MINERU,
        description="PDF parser: mineru (default), opendataloader, naive or auto.",
    )
    docling_force_ocr: StrictBool | None = Field(
        default=None, description="Quality tier: OCR every page, text layer or not."
    )
    image_bucket: StrictStr | None = Field(
        default=None, description="Bucket for PDF/DOCX/MinerU images (with image_prefix)."
    )
    image_prefix: StrictStr | None = Field(
        default=None, description="Key prefix for those images; links use the object keys."
    )
    is_retry: StrictBool = Field(
        default=False, description="True for a user-triggered retry of a failed task."
    )
    previous_task_id: TaskId | None = Field(
        default=None,
        description="Required when is_retry is true: task_id of the failed run being retried.",
    )
    issued_by: TaskIssuer = Field(
        default=TaskIssuer.PRODUCER,
        description=(
            "producer (default): the producer asked for this run and gets its ParseResult. "
            "ragline: ragline issued it itself (an operator's retry or re-index); no "
            "ParseResult is published for it, its outcome is in the run tables."
        ),
    )

    metadata: Metadata | None = Field(
        default=None,
        description=(
            "ragline extension, not in the seed contract (docs/wire-contracts.md): the"
            " document's typed metadata, what search filters on. A string, a number, a list"
            ' of strings or {"date": "YYYY-MM-DD"} per key (at most 32 keys, 1-64 of a-z,'
            " 0-9, _; strings up to 256 characters, lists up to 32 items). Stored when a"
            " producer's new task is accepted; absent or null keeps the document's metadata."
        ),
        examples=[{"author": "Ann", "year": 2021, "published": {"date": "2024-05-01"}}],
    )

    @model_validator(mode="after")
    def _retry_names_its_previous_task(self) -> Self:
        if self.is_retry and self.previous_task_id is None:
            raise ValueError("previous_task_id is required when is_retry is true")
        return self

    @property
    def routing_key(self) -> str:
        """Task messages are routed by file type."""
        return self.file_type
