"""Views `document_parsed_log` and `document_parse_pipeline`: the Java side's names.

The Java back end reads `document_parsed_log.parsed_bucket_name` / `parsed_object_key`
(a md/markdown file's parse output; `document_parsed_log_id` in every result is that row's
`id`) and `document_parse_pipeline.pipeline_status`, `failure_reason`, `retry_of_task_id`,
`superseded_by_task_id` (docs/design/0005-wire-contract.md). ragline's tables are
`parsed_log` (`parsed_bucket`) and `parse_run` (`keyword_indexing_*`). These views give the
back end's names over ragline's tables without renaming what ragline writes; each joins the
other table on the unique task_id (the log names its pipeline row, the pipeline its log
row), which also makes them read-only on PostgreSQL and SQLite (no INSERT or DELETE on
MySQL/MariaDB either). docs/wire-contracts.md lists the columns as part of the contract.

`parsed_*` is where the run's Markdown is: the log's own location, else the run's (a retry
that inherited CLEANING wrote no location into its own log; its run carries the inherited
one, its id written in advance), so a result's document_parsed_log_id always finds it.

A later migration that recreates or retypes a column these views read must drop them first
and create them again (PostgreSQL refuses to retype a column a view uses; SQLite's table
rebuild would break them). It also indexes parsed_log.retry_of_task_id, which the seed's
retry trace filters on.

Revision ID: 0008_java_views
Revises: 0007_task_sources
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0008_java_views"
down_revision = "0007_task_sources"
branch_labels = None
depends_on = None

# ragline's stage column prefix -> the seeds' (es_indexing is ragline's keyword_indexing)
STAGES = (
    ("cleaning", "cleaning"),
    ("chunking", "chunking"),
    ("vectorizing", "vectorizing"),
    ("pretokenize", "pretokenize"),
    ("keyword_indexing", "es_indexing"),
    ("sparse_vectorizing", "sparse_vectorizing"),
)

IDENTITY = ("original_file_id", "document_parse_task_id", "user_id", "dataset_id", "file_type")

PARSED_LOG = f"""
CREATE VIEW document_parsed_log AS
SELECT
    l.id AS id,
    l.task_id AS task_id,
    CASE WHEN l.parsed_object_key IS NOT NULL THEN l.parsed_bucket
         ELSE r.markdown_bucket END AS parsed_bucket_name,
    COALESCE(l.parsed_object_key, r.markdown_object_key) AS parsed_object_key,
    l.retry_of_task_id AS retry_of_task_id,
    l.source_bucket AS source_bucket,
    l.source_object_key AS source_object_key,
    l.parse_backend AS parse_backend,
    l.created_at AS created_at,
    r.id AS document_parse_pipeline_id,
    {", ".join(f"r.{column} AS {column}" for column in IDENTITY)}
FROM parsed_log l
LEFT JOIN parse_run r ON r.task_id = l.task_id
"""  # every name is a constant of this module  # nosec B608

_STAGE_COLUMNS = ",\n    ".join(
    f"r.{ours}_status AS {theirs}_status, r.{ours}_duration_ms AS {theirs}_duration_ms"
    for ours, theirs in STAGES
)

PARSE_PIPELINE = f"""
CREATE VIEW document_parse_pipeline AS
SELECT
    r.id AS id,
    r.task_id AS task_id,
    l.id AS document_parsed_log_id,
    {", ".join(f"r.{column} AS {column}" for column in IDENTITY)},
    r.pipeline_status AS pipeline_status,
    {_STAGE_COLUMNS},
    r.failed_stage AS failed_stage,
    r.recover_from_stage AS recover_from_stage,
    r.failure_reason AS failure_reason,
    r.created_at AS created_at,
    r.started_at AS started_at,
    r.finished_at AS finished_at,
    r.retry_of_task_id AS retry_of_task_id,
    r.superseded_by_task_id AS superseded_by_task_id
FROM parse_run r
LEFT JOIN parsed_log l ON l.task_id = r.task_id
"""  # every name is a constant of this module  # nosec B608


def upgrade() -> None:
    # the seed's retry trace (`WHERE retry_of_task_id = ...`) without a table scan
    op.create_index("ix_parsed_log_retry_of_task_id", "parsed_log", ["retry_of_task_id"])
    op.execute(PARSED_LOG)
    op.execute(PARSE_PIPELINE)


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS document_parse_pipeline")
    op.execute("DROP VIEW IF EXISTS document_parsed_log")
    op.drop_index("ix_parsed_log_retry_of_task_id", table_name="parsed_log")
