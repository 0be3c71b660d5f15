"""embedding_generation: `vectorizing_starts`, the count of VECTORIZING stages a user began
while a shadow generation was open.

A swap reads it before it looks at the user's runs and commits only if it is unchanged, so a
run that starts VECTORIZING after that look either makes the swap retry or reads its target
after the swap committed (issue 21's swap race). Existing rows start at 0.

Revision ID: 0015_vectorizing_starts
Revises: 0014_reembedding_target_config
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_vectorizing_starts"
down_revision = "0014_reembedding_target_config"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "embedding_generation",
        sa.Column("vectorizing_starts", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    with op.batch_alter_table("embedding_generation") as batch:
        batch.drop_column("vectorizing_starts")
