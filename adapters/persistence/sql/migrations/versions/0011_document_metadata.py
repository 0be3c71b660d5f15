"""document_metadata: each document's typed metadata, versioned for compare-and-set.

Written at submit (the HTTP task's optional `metadata`) and by
`PUT /api/v1/documents/{doc_id}/metadata`; the indexes copy it onto the document's points.
No backfill: documents indexed before this revision have no metadata.

Revision ID: 0011
Revises: 0010_chunks_uploads
Create Date: 2026-12-02
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0011_document_metadata"
down_revision = "0010_chunks_uploads"
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


def upgrade() -> None:
    op.create_table(
        "document_metadata",
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("dataset_id", sa.String(64), nullable=False),
        sa.Column("doc_id", sa.String(128), nullable=False),
        sa.Column(
            "metadata_json",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column(
            "updated_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("user_id", "dataset_id", "doc_id", name="pk_document_metadata"),
        **MYSQL,
    )


def downgrade() -> None:
    op.drop_table("document_metadata")
