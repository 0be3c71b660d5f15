"""parsed_log: `parse_backend` (the engine that really parsed) and `parse_warnings` (JSON).

Revision ID: 0004_parse_backend
Revises: 0003_outbox_claims
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0004_parse_backend"
down_revision = "0003_outbox_claims"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("parsed_log") as batch:
        batch.add_column(sa.Column("parse_backend", sa.String(64), nullable=True))
        batch.add_column(
            sa.Column(
                "parse_warnings",
                sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("parsed_log") as batch:
        batch.drop_column("parse_warnings")
        batch.drop_column("parse_backend")
