"""parse_run: an index on (user_id, dataset_id, original_file_id) for listing a tenant's runs
and a dataset's documents, and `document_deleted_at` (the tombstone DeleteDocument sets).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEX = "ix_parse_run_user_id_dataset_id_original_file_id"


def upgrade() -> None:
    op.add_column(
        "parse_run",
        sa.Column(
            "document_deleted_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"),
            nullable=True,
        ),
    )
    op.create_index(INDEX, "parse_run", ["user_id", "dataset_id", "original_file_id"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="parse_run")
    op.drop_column("parse_run", "document_deleted_at")
