"""chunk: `enabled` and `edited`, a document's chunks switched off or re-worded by its owner.

A disabled chunk is in no index and skipped by indexing; an edited chunk's text is its
owner's (a re-chunking of the document, a re-index or a new upload, cuts fresh chunks from
the Markdown and drops both marks: docs/operations.md). Existing rows are enabled, unedited.
The Java views (0008) read neither table's changed columns.

Revision ID: 0010_chunk_edits
Revises: 0008_java_views
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_chunk_edits"
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


def downgrade() -> None:
    with op.batch_alter_table("chunk") as batch:
        batch.drop_column("edited")
        batch.drop_column("enabled")
