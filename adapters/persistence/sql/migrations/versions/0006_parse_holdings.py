"""parse_holding: which user holds which bytes (a tenant sees only the batches of those).

No backfill: runs and parsed logs do not record their source's sha256, and guessing holders
from object keys could grant bytes a user never had. After the upgrade a tenant sees the
batches of bytes it ingests or requests again; the service token sees all, as before.

Revision ID: 0006_parse_holdings
Revises: 0005_parse_batches
Create Date: 2026-12-20
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0006_parse_holdings"
down_revision = "0005_parse_batches"
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
        "parse_holding",
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "sha256", name="pk_parse_holding"),
        **MYSQL,
    )


def downgrade() -> None:
    op.drop_table("parse_holding")
