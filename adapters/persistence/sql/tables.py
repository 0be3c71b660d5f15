"""The relational schema (SQLAlchemy Core). Alembic migrations build exactly this; a test
compares the migrated database with this metadata on every backend.

Tables: parsed_log (snapshot of each task as received), parse_run (the run state machine,
one column group per stage as in the source design), chunk (chunk truth rows), model_config
(per-user model settings, API key encrypted), outbox (results waiting to be published),
parse_batch (the parse cache: what was parsed, at which tier, which pages),
parse_plan_lock (one row per (sha256, tier), locked while a request is planned),
parse_holding (which user holds which bytes: who may see their batches) and
document_metadata (a document's typed metadata, versioned for compare-and-set).
The views the Java side reads (document_parsed_log, document_parse_pipeline) are created by
migration 0008_java_views; this metadata holds tables only.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    text,
)

from ragline.adapters.persistence.sql.types import UtcDateTime, long_binary, long_text
from ragline.domain.parse_run import STAGE_ORDER, Stage

TASK_ID = 256  # contracts.wire.parse_task.TASK_ID_MAX_CHARS
CLAIM_OWNER = 64  # an outbox relay pass: "<relay id>/<pass>"
TENANT_ID = 64  # user_id, dataset_id
DOC_ID = 128
UPLOAD_KEY = 128  # the Idempotency-Key header of an upload
CHUNK_ID = 128
BUCKET = 255
OBJECT_KEY = 1024
PARSE_BACKEND = 64
STATUS = 16
STAGE_NAME = 32
ID_MAX = 2**31 - 1
"""The largest value an Integer id column holds on every backend (PostgreSQL and MariaDB
INTEGER are 32-bit): a wider id names no row, and is never sent to the database."""
FAILURE_REASON = 512  # domain.parse_run.MAX_FAILURE_REASON_LENGTH

# MySQL/MariaDB: 4-byte UTF-8 and binary (case-sensitive) comparison, as on SQLite and
# PostgreSQL; InnoDB for row locks and transactions.
MYSQL_TABLE_ARGS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "mariadb_engine": "InnoDB",
    "mariadb_charset": "utf8mb4",
    "mariadb_collate": "utf8mb4_bin",
}

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def stage_prefix(stage: Stage) -> str:
    """Column prefix of a stage: `cleaning_status`, `keyword_indexing_duration_ms`, ..."""
    return stage.value.lower()


STAGE_PREFIXES: tuple[str, ...] = tuple(stage_prefix(stage) for stage in STAGE_ORDER)


def _stage_columns() -> list[Column[Any]]:
    columns: list[Column[Any]] = []
    for prefix in STAGE_PREFIXES:
        columns += [
            Column(f"{prefix}_status", String(STATUS), nullable=False),
            Column(f"{prefix}_started_at", UtcDateTime(), nullable=True),
            Column(f"{prefix}_finished_at", UtcDateTime(), nullable=True),
            Column(f"{prefix}_duration_ms", BigInteger(), nullable=True),
            Column(f"{prefix}_inherited", Boolean(), nullable=False),
        ]
    return columns


parsed_log = Table(
    "parsed_log",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("task_id", String(TASK_ID), nullable=False),
    Column("payload_json", long_text(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("retry_of_task_id", String(TASK_ID), nullable=True),
    Column("parsed_bucket", String(BUCKET), nullable=True),
    Column("parsed_object_key", String(OBJECT_KEY), nullable=True),
    Column("parse_backend", String(PARSE_BACKEND), nullable=True),
    Column("parse_warnings", long_text(), nullable=True),  # JSON array of strings
    # the object the task names as its source (a delete never removes one a live document
    # names; migration 0006_task_sources)
    Column("source_bucket", String(BUCKET), nullable=True),
    Column("source_object_key", String(OBJECT_KEY), nullable=True),
    UniqueConstraint("task_id"),
    # the business side follows a retry chain by it (view document_parsed_log, 0008)
    Index(None, "retry_of_task_id"),
    **MYSQL_TABLE_ARGS,
)

parse_run = Table(
    "parse_run",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("task_id", String(TASK_ID), nullable=False),
    Column("original_file_id", String(TENANT_ID), nullable=False),
    Column("document_parse_task_id", String(TENANT_ID), nullable=False),
    Column("user_id", String(TENANT_ID), nullable=False),
    Column("dataset_id", String(TENANT_ID), nullable=False),
    Column("file_type", String(32), nullable=False),
    *_stage_columns(),
    Column("pipeline_status", String(STATUS), nullable=False),
    Column("failed_stage", String(STAGE_NAME), nullable=True),
    Column("recover_from_stage", String(STAGE_NAME), nullable=True),
    Column("failure_reason", String(FAILURE_REASON), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("started_at", UtcDateTime(), nullable=True),
    Column("finished_at", UtcDateTime(), nullable=True),
    Column("superseded_by_task_id", String(TASK_ID), nullable=True),
    Column("retry_of_task_id", String(TASK_ID), nullable=True),
    Column("markdown_bucket", String(BUCKET), nullable=True),
    Column("markdown_object_key", String(OBJECT_KEY), nullable=True),
    Column("version", Integer(), nullable=False),
    # outside the aggregate: set on every run of a document when the document is deleted
    # (its chunks and index entries are gone; the runs stay as history and as the
    # idempotency barrier). Migration 0002.
    Column("document_deleted_at", UtcDateTime(), nullable=True),
    # outside the aggregate: the worker running the run touches it every heartbeat interval;
    # an unfinished run whose heartbeat (or, before the first, created_at) is old has lost
    # its worker, and the stale-run sweep converges it (migration 0003_outbox_claims).
    Column("heartbeat_at", UtcDateTime(), nullable=True),
    UniqueConstraint("task_id"),
    Index(None, "pipeline_status", "created_at"),
    Index(None, "created_at"),
    # listing a tenant's runs and a dataset's documents (migration 0002)
    Index(None, "user_id", "dataset_id", "original_file_id"),
    **MYSQL_TABLE_ARGS,
)

chunk = Table(
    "chunk",
    metadata,
    # Key (chunk_id, user_id, dataset_id): chunk_id leads so that a lookup or move by ids
    # probes the key per id whatever the planner believes about the tenant's row count.
    Column("chunk_id", String(CHUNK_ID), primary_key=True),
    Column("user_id", String(TENANT_ID), primary_key=True),
    Column("dataset_id", String(TENANT_ID), primary_key=True),
    Column("doc_id", String(DOC_ID), nullable=False),
    Column("task_id", String(TASK_ID), nullable=False),
    Column("parent_id", String(CHUNK_ID), nullable=True),
    Column("order_index", Integer(), nullable=False),
    Column("text", long_text(), nullable=False),
    Column("section_path", long_text(), nullable=False),  # JSON array of headings
    Column("canonical_path", long_text(), nullable=False),
    Column("structure_node_id", String(CHUNK_ID), nullable=True),
    Column("node_type", String(64), nullable=True),
    Column("source_type", String(64), nullable=False),
    Column("span_start", Integer(), nullable=False),
    Column("span_end", Integer(), nullable=False),
    Column("dense_status", String(STATUS), nullable=True),
    Column("sparse_status", String(STATUS), nullable=True),
    Column("enabled", Boolean(), nullable=False, server_default=text("TRUE")),
    Column("edited", Boolean(), nullable=False, server_default=text("FALSE")),
    # the document's live lineage (what search, listings read); a run's rows are not live
    # until it reaches SUCCESS (docs/operations.md, "Re-uploading a document")
    Column("live", Boolean(), nullable=False, server_default=text("TRUE")),
    # doc_id first: a lookup by (user_id, dataset_id, chunk_id) must not be able to use
    # this index by its prefix (see repositories/chunks.py); listing uses all four columns.
    Index(None, "doc_id", "user_id", "dataset_id", "order_index"),
    **MYSQL_TABLE_ARGS,
)

upload = Table(
    "upload",
    metadata,
    Column("user_id", String(TENANT_ID), primary_key=True),
    Column("idempotency_key", String(UPLOAD_KEY), primary_key=True),
    Column("sha256", String(64), nullable=False),
    Column("dataset_id", String(TENANT_ID), nullable=False),
    Column("doc_id", String(DOC_ID), nullable=False),
    Column("task_id", String(TASK_ID), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    **MYSQL_TABLE_ARGS,
)

model_config = Table(
    "model_config",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("user_id", String(TENANT_ID), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("model", String(255), nullable=False),
    Column("base_url", String(1024), nullable=True),
    Column("api_key_encrypted", long_text(), nullable=True),
    Column("dimension", Integer(), nullable=True),
    # TRUE or NULL, never FALSE: NULLs never collide in a unique index, so the constraint
    # below allows one default per (user, kind) on all three backends (no partial indexes).
    Column("is_default", Boolean(), nullable=True),
    UniqueConstraint("user_id", "kind", "is_default"),
    **MYSQL_TABLE_ARGS,
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("task_id", String(TASK_ID), nullable=False),
    Column("topic", String(255), nullable=False),
    Column("routing_key", String(TASK_ID), nullable=False),
    Column("body", long_binary(), nullable=False),
    Column("attempts", Integer(), nullable=False),
    Column("next_attempt_at", UtcDateTime(), nullable=False),
    Column("status", String(STATUS), nullable=False),
    Column("last_error", long_text(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("claimed_by", String(CLAIM_OWNER), nullable=True),
    Column("claimed_until", UtcDateTime(), nullable=True),
    UniqueConstraint("task_id"),
    Index(None, "status", "next_attempt_at"),
    **MYSQL_TABLE_ARGS,
)

SHA256 = 64
TIER = 16

parse_batch = Table(
    "parse_batch",
    metadata,
    Column("id", Integer(), primary_key=True, autoincrement=True),
    Column("sha256", String(SHA256), nullable=False),
    Column("tier", String(TIER), nullable=False),
    Column("first_page", Integer(), nullable=False),
    Column("last_page", Integer(), nullable=False),
    Column("status", String(STATUS), nullable=False),
    Column("priority", Integer(), nullable=False),
    Column("source_bucket", String(BUCKET), nullable=False),
    Column("source_key", String(OBJECT_KEY), nullable=False),
    Column("file_type", String(32), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("started_at", UtcDateTime(), nullable=True),
    Column("done_at", UtcDateTime(), nullable=True),
    Column("error_code", String(64), nullable=True),
    Column("error_msg", long_text(), nullable=True),
    Column("owner", String(128), nullable=True),
    Column("lease_until", UtcDateTime(), nullable=True),
    Column("claims", Integer(), nullable=False),
    Column("backend", String(64), nullable=True),
    Column("page_count", Integer(), nullable=True),
    Column("source_tag", String(SHA256), nullable=True),
    Column("requested_backend", String(32), nullable=True),
    Column("warnings", long_text(), nullable=True),  # JSON array of strings
    Index(None, "sha256", "tier"),
    Index(None, "source_tag"),
    Index(None, "status", "priority"),
    **MYSQL_TABLE_ARGS,
)

parse_plan_lock = Table(
    "parse_plan_lock",
    metadata,
    Column("sha256", String(SHA256), primary_key=True),
    Column("tier", String(TIER), primary_key=True),
    **MYSQL_TABLE_ARGS,
)

parse_holding = Table(
    "parse_holding",
    metadata,
    # user_id leads: the one question asked is "which of these sha256s does this user hold"
    Column("user_id", String(TENANT_ID), primary_key=True),
    Column("sha256", String(SHA256), primary_key=True),
    **MYSQL_TABLE_ARGS,
)

document_metadata = Table(
    "document_metadata",
    metadata,
    # one row per document and tenant scope (migration 0011); `metadata_json` is
    # DocumentMetadata.as_plain() as JSON, `version` the compare-and-set counter
    Column("user_id", String(TENANT_ID), primary_key=True),
    Column("dataset_id", String(TENANT_ID), primary_key=True),
    Column("doc_id", String(DOC_ID), primary_key=True),
    Column("metadata_json", long_text(), nullable=False),
    Column("version", Integer(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    **MYSQL_TABLE_ARGS,
)

# -- re-embedding (issue 21): generations per user, re-embeddings, their copy batches --------

embedding_generation = Table(
    "embedding_generation",
    metadata,
    Column("user_id", String(TENANT_ID), primary_key=True),
    Column("active", Integer(), nullable=False),
    Column("shadow", Integer(), nullable=True),
    Column("newest", Integer(), nullable=False),
    Column("version", Integer(), nullable=False),
    Column("vectorizing_starts", Integer(), nullable=False, server_default=text("0")),
    **MYSQL_TABLE_ARGS,
)

REEMBEDDING_ID = 64

reembedding = Table(
    "reembedding",
    metadata,
    Column("id", String(REEMBEDDING_ID), primary_key=True),
    Column("user_id", String(TENANT_ID), nullable=False),
    Column("source_generation", Integer(), nullable=False),
    Column("target_generation", Integer(), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("model", String(255), nullable=False),
    Column("dimension", Integer(), nullable=False),
    Column("source_dimension", Integer(), nullable=True),
    Column("base_url", String(1024), nullable=True),  # 0014: the target config's endpoint
    Column("api_key_encrypted", long_text(), nullable=True),  # and its key, a Fernet token
    Column("status", String(STATUS), nullable=False),
    Column("total", Integer(), nullable=False),
    Column("done", Integer(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("started_at", UtcDateTime(), nullable=True),
    Column("ready_at", UtcDateTime(), nullable=True),
    Column("finished_at", UtcDateTime(), nullable=True),
    Column("error", long_text(), nullable=True),
    Column("version", Integer(), nullable=False),
    Index(None, "user_id", "status"),
    Index(None, "status"),
    **MYSQL_TABLE_ARGS,
)

reembedding_batch = Table(
    "reembedding_batch",
    metadata,
    Column("reembedding_id", String(REEMBEDDING_ID), primary_key=True),
    Column("seq", Integer(), primary_key=True, autoincrement=False),
    Column("first_chunk_id", String(CHUNK_ID), nullable=False),
    Column("last_chunk_id", String(CHUNK_ID), nullable=False),
    Column("size", Integer(), nullable=False),
    Column("status", String(STATUS), nullable=False),
    Column("owner", String(128), nullable=True),
    Column("lease_until", UtcDateTime(), nullable=True),
    Column("claims", Integer(), nullable=False),
    Column("copied", Integer(), nullable=False),
    Column("copied_digest", String(64), nullable=True),  # 0014: ids_digest of what it copied
    **MYSQL_TABLE_ARGS,
)
