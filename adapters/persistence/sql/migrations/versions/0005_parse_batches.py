"""parse_batch (the parse cache of docs/design/0003-parse-cache.md) and parse_plan_lock (serializes
planning).

Revision ID: 0005_parse_batches
Revises: 0004_parse_backend
Create Date: 2026-12-01
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005_parse_batches"
down_revision = "0004_parse_backend"
branch_labels = None
depends_on = None

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


def upgrade() -> None:
    op.create_table(
        "parse_batch",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("first_page", sa.Integer(), nullable=False),
        sa.Column("last_page", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("source_bucket", sa.String(255), nullable=False),
        sa.Column("source_key", sa.String(1024), nullable=False),
        sa.Column("file_type", sa.String(32), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("started_at", _time(), nullable=True),
        sa.Column("done_at", _time(), nullable=True),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column(
            "error_msg",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
            nullable=True,
        ),
        sa.Column("owner", sa.String(128), nullable=True),
        sa.Column("lease_until", _time(), nullable=True),
        sa.Column("claims", sa.Integer(), nullable=False),
        sa.Column("backend", sa.String(64), nullable=True),
        sa.Column("page_count", sa.Integer(), nullable=True),
        sa.Column("source_tag", sa.String(64), nullable=True),
        sa.Column("requested_backend", sa.String(32), nullable=True),
        sa.Column(
            "warnings",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
            nullable=True,
        ),
        sa.PrimaryKeyConstraint("id", name="pk_parse_batch"),
        **MYSQL,
    )
    op.create_index("ix_parse_batch_sha256_tier", "parse_batch", ["sha256", "tier"])
    op.create_index("ix_parse_batch_status_priority", "parse_batch", ["status", "priority"])
    op.create_index("ix_parse_batch_source_tag", "parse_batch", ["source_tag"])
    op.create_table(
        "parse_plan_lock",
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("sha256", "tier", name="pk_parse_plan_lock"),
        **MYSQL,
    )


def downgrade() -> None:
    op.drop_table("parse_plan_lock")
    op.drop_index("ix_parse_batch_source_tag", table_name="parse_batch")
    op.drop_index("ix_parse_batch_status_priority", table_name="parse_batch")
    op.drop_index("ix_parse_batch_sha256_tier", table_name="parse_batch")
    op.drop_table("parse_batch")
