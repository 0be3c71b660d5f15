"""chunk: `live`, the document's live lineage.

A run writes its chunk rows (its lineage, keyed by its task id and in its chunk ids) not
live; at the run's SUCCESS they become live and every other lineage goes, so a re-upload
replaces a document only when the new run succeeds (docs/operations.md). Existing rows are
live. The Java views (0008) do not read the column.

Revision ID: 0013_chunk_lineage
Revises: 0010_chunks_uploads
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_chunk_lineage"
down_revision = "0012_reembeddings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "chunk", sa.Column("live", sa.Boolean(), nullable=False, server_default=sa.text("TRUE"))
    )


def downgrade() -> None:
    with op.batch_alter_table("chunk") as batch:
        batch.drop_column("live")
