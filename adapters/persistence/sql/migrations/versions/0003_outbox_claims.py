"""outbox: `claimed_by` and `claimed_until`, the lease a relay pass holds on the rows it is
publishing, so concurrent relays publish disjoint rows and a dead relay's claim expires.
parse_run: `heartbeat_at`, touched by the worker running the run, so a start-up sweep can
tell a run whose worker is gone (stale heartbeat) from one still being worked on.

Revision ID: 0003_outbox_claims
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0003_outbox_claims"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("outbox", sa.Column("claimed_by", sa.String(64), nullable=True))
    op.add_column(
        "outbox",
        sa.Column(
            "claimed_until",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"),
            nullable=True,
        ),
    )
    op.add_column(
        "parse_run",
        sa.Column(
            "heartbeat_at",
            sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"),
            nullable=True,
        ),
    )


def downgrade() -> None:
    op.drop_column("parse_run", "heartbeat_at")
    op.drop_column("outbox", "claimed_until")
    op.drop_column("outbox", "claimed_by")
