"""chunk: `enabled` and `edited`; `upload`: what an upload's Idempotency-Key was used for.

A document's chunks may be switched off or re-worded by its owner.
A disabled chunk is in no index and skipped by indexing; an edited chunk's text is its
owner's (a re-chunking of the document, a re-index or a new upload, cuts fresh chunks from
the Markdown and drops both marks: docs/operations.md). Existing rows are enabled, unedited.
The Java views (0008) read neither table's changed columns. `upload` keys an upload's
`Idempotency-Key` per user (the first insert wins; docs/operations.md).

Revision ID: 0010_chunks_uploads
Revises: 0008_java_views
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0010_chunks_uploads"
down_revision = "0008_java_views"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "chunk", sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.text("TRUE"))
    )
    op.add_column(
        "chunk", sa.Column("edited", sa.Boolean(), nullable=False, server_default=sa.text("FALSE"))
    )

    op.create_table(
        "upload",
        sa.Column("user_id", sa.String(64), primary_key=True),
        sa.Column("idempotency_key", sa.String(128), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("doc_id", sa.String(128), nullable=False),
        sa.Column("task_id", sa.String(256), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"),
            nullable=False,
        ),
        mysql_engine="InnoDB",
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_bin",
        mariadb_engine="InnoDB",
        mariadb_charset="utf8mb4",
        mariadb_collate="utf8mb4_bin",
    )


def downgrade() -> None:
    op.drop_table("upload")
    with op.batch_alter_table("chunk") as batch:
        batch.drop_column("edited")
        batch.drop_column("enabled")
