"""reembedding: `base_url` and `api_key_encrypted`, the rest of the target EMBEDDING config.

The copy embeds with exactly the model the user asked for and the swap makes that config the
user's default, so the row keeps what `provider`/`model`/`dimension` do not: the endpoint and
the API key (a Fernet token, as `model_config.api_key_encrypted`). Existing rows get NULLs:
a re-embedding planned before this revision copies with no base_url and no key.

reembedding_batch: `copied_digest`, the digest of the chunk ids a done batch copied, so the
catch-up sees a range whose chunks were replaced by as many others (NULL: compare counts).

Revision ID: 0014_reembedding_target_config
Revises: 0013_chunk_lineage
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0014_reembedding_target_config"
down_revision = "0013_chunk_lineage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("reembedding", sa.Column("base_url", sa.String(1024), nullable=True))
    op.add_column(
        "reembedding",
        sa.Column(
            "api_key_encrypted",
            sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
            nullable=True,
        ),
    )
    op.add_column("reembedding_batch", sa.Column("copied_digest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reembedding_batch") as batch:
        batch.drop_column("copied_digest")
    with op.batch_alter_table("reembedding") as batch:
        batch.drop_column("api_key_encrypted")
        batch.drop_column("base_url")
