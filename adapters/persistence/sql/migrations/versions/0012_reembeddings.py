"""embedding_generation, reembedding, reembedding_batch: re-embedding a user's chunks into a
shadow generation (issue 21). No backfill: a user without a row is at generation 0.

Revision ID: 0012_reembeddings
Revises: 0010_chunks_uploads (the coordinator re-chains)
Create Date: 2026-12-02
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0012_reembeddings"
down_revision = "0011_document_metadata"
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
        "embedding_generation",
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("active", sa.Integer(), nullable=False),
        sa.Column("shadow", sa.Integer(), nullable=True),
        sa.Column("newest", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name="pk_embedding_generation"),
        **MYSQL,
    )
    op.create_table(
        "reembedding",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("source_generation", sa.Integer(), nullable=False),
        sa.Column("target_generation", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("dimension", sa.Integer(), nullable=False),
        sa.Column("source_dimension", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("started_at", _time(), nullable=True),
        sa.Column("ready_at", _time(), nullable=True),
        sa.Column("finished_at", _time(), nullable=True),
        sa.Column(
            "error",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
            nullable=True,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reembedding"),
        **MYSQL,
    )
    op.create_index("ix_reembedding_user_id_status", "reembedding", ["user_id", "status"])
    op.create_index("ix_reembedding_status", "reembedding", ["status"])
    op.create_table(
        "reembedding_batch",
        sa.Column("reembedding_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("first_chunk_id", sa.String(128), nullable=False),
        sa.Column("last_chunk_id", sa.String(128), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(128), nullable=True),
        sa.Column("lease_until", _time(), nullable=True),
        sa.Column("claims", sa.Integer(), nullable=False),
        sa.Column("copied", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("reembedding_id", "seq", name="pk_reembedding_batch"),
        **MYSQL,
    )


def downgrade() -> None:
    op.drop_table("reembedding_batch")
    op.drop_index("ix_reembedding_status", table_name="reembedding")
    op.drop_index("ix_reembedding_user_id_status", table_name="reembedding")
    op.drop_table("reembedding")
    op.drop_table("embedding_generation")
