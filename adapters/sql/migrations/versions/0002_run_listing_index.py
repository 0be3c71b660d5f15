"""parse_run: an index on (user_id, dataset_id, original_file_id) for listing a tenant's runs
and a dataset's documents.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEX = "ix_parse_run_user_id_dataset_id_original_file_id"


def upgrade() -> None:
    op.create_index(INDEX, "parse_run", ["user_id", "dataset_id", "original_file_id"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="parse_run")
