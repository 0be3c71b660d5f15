"""Initial schema: parsed_log, parse_run, chunk, model_config, outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STAGES = (
    "cleaning",
    "chunking",
    "vectorizing",
    "pretokenize",
    "keyword_indexing",
    "sparse_vectorizing",
)
MYSQL: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "mariadb_engine": "InnoDB",
    "mariadb_charset": "utf8mb4",
    "mariadb_collate": "utf8mb4_bin",
}


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def _long_text() -> sa.types.TypeEngine[Any]:
    return sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def _stage_columns() -> list[sa.Column[Any]]:
    columns: list[sa.Column[Any]] = []
    for stage in STAGES:
        columns += [
            sa.Column(f"{stage}_status", sa.String(16), nullable=False),
            sa.Column(f"{stage}_started_at", _time(), nullable=True),
            sa.Column(f"{stage}_finished_at", _time(), nullable=True),
            sa.Column(f"{stage}_duration_ms", sa.BigInteger(), nullable=True),
            sa.Column(f"{stage}_inherited", sa.Boolean(), nullable=False),
        ]
    return columns


def upgrade() -> None:
    op.create_table(
        "parsed_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(256), nullable=False),
        sa.Column("payload_json", _long_text(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("retry_of_task_id", sa.String(256), nullable=True),
        sa.Column("parsed_bucket", sa.String(255), nullable=True),
        sa.Column("parsed_object_key", sa.String(1024), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_parsed_log"),
        sa.UniqueConstraint("task_id", name="uq_parsed_log_task_id"),
        **MYSQL,
    )
    op.create_table(
        "parse_run",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(256), nullable=False),
        sa.Column("original_file_id", sa.String(64), nullable=False),
        sa.Column("document_parse_task_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("file_type", sa.String(32), nullable=False),
        *_stage_columns(),
        sa.Column("pipeline_status", sa.String(16), nullable=False),
        sa.Column("failed_stage", sa.String(32), nullable=True),
        sa.Column("recover_from_stage", sa.String(32), nullable=True),
        sa.Column("failure_reason", sa.String(512), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("started_at", _time(), nullable=True),
        sa.Column("finished_at", _time(), nullable=True),
        sa.Column("superseded_by_task_id", sa.String(256), nullable=True),
        sa.Column("retry_of_task_id", sa.String(256), nullable=True),
        sa.Column("markdown_bucket", sa.String(255), nullable=True),
        sa.Column("markdown_object_key", sa.String(1024), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_parse_run"),
        sa.UniqueConstraint("task_id", name="uq_parse_run_task_id"),
        **MYSQL,
    )
    op.create_index(
        "ix_parse_run_pipeline_status_created_at", "parse_run", ["pipeline_status", "created_at"]
    )
    op.create_index("ix_parse_run_created_at", "parse_run", ["created_at"])
    op.create_table(
        "chunk",
        sa.Column("chunk_id", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("doc_id", sa.String(128), nullable=False),
        sa.Column("task_id", sa.String(256), nullable=False),
        sa.Column("parent_id", sa.String(128), nullable=True),
        sa.Column("order_index", sa.Integer(), nullable=False),
        sa.Column("text", _long_text(), nullable=False),
        sa.Column("section_path", _long_text(), nullable=False),
        sa.Column("canonical_path", _long_text(), nullable=False),
        sa.Column("structure_node_id", sa.String(128), nullable=True),
        sa.Column("node_type", sa.String(64), nullable=True),
        sa.Column("source_type", sa.String(64), nullable=False),
        sa.Column("span_start", sa.Integer(), nullable=False),
        sa.Column("span_end", sa.Integer(), nullable=False),
        sa.Column("dense_status", sa.String(16), nullable=True),
        sa.Column("sparse_status", sa.String(16), nullable=True),
        sa.PrimaryKeyConstraint("chunk_id", "user_id", "dataset_id", name="pk_chunk"),
        **MYSQL,
    )
    op.create_index(
        "ix_chunk_doc_id_user_id_dataset_id_order_index",
        "chunk",
        ["doc_id", "user_id", "dataset_id", "order_index"],
    )
    op.create_table(
        "model_config",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("base_url", sa.String(1024), nullable=True),
        sa.Column("api_key_encrypted", _long_text(), nullable=True),
        sa.Column("dimension", sa.Integer(), nullable=True),
        sa.Column("is_default", sa.Boolean(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_model_config"),
        sa.UniqueConstraint(
            "user_id", "kind", "is_default", name="uq_model_config_user_id_kind_is_default"
        ),
        **MYSQL,
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(256), nullable=False),
        sa.Column("topic", sa.String(255), nullable=False),
        sa.Column("routing_key", sa.String(256), nullable=False),
        sa.Column(
            "body",
            sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb"),
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _time(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("last_error", _long_text(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("updated_at", _time(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
        sa.UniqueConstraint("task_id", name="uq_outbox_task_id"),
        **MYSQL,
    )
    op.create_index("ix_outbox_status_next_attempt_at", "outbox", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_outbox_status_next_attempt_at", table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("model_config")
    op.drop_index("ix_chunk_doc_id_user_id_dataset_id_order_index", table_name="chunk")
    op.drop_table("chunk")
    op.drop_index("ix_parse_run_created_at", table_name="parse_run")
    op.drop_index("ix_parse_run_pipeline_status_created_at", table_name="parse_run")
    op.drop_table("parse_run")
    op.drop_table("parsed_log")
