"""parsed_log: `source_bucket`/`source_object_key`, the object each task names as its source.

A document delete never removes an object a live document's run names as its source or
Markdown (docs/security.md); the runs' Markdown is on parse_run, the sources are recorded
here. Rows written before this revision get theirs from the stored task (payload_json).

Revision ID: 0007_task_sources
Revises: 0005_parse_batches
Create Date: 2026-12-02
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0007_task_sources"
down_revision = "0006_parse_holdings"
branch_labels = None
depends_on = None

BATCH = 1000


def _source(payload: str) -> tuple[str, str] | None:
    """The source a stored task names; None for a rejected body or anything unexpected."""
    try:
        task = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(task, dict):
        return None
    bucket, key = task.get("source_bucket"), task.get("source_object_key")
    if not isinstance(bucket, str) or not isinstance(key, str) or not bucket or not key:
        return None
    if len(bucket) > 255 or len(key) > 1024:
        return None
    return bucket, key


def upgrade() -> None:
    with op.batch_alter_table("parsed_log") as batch:
        batch.add_column(sa.Column("source_bucket", sa.String(255), nullable=True))
        batch.add_column(sa.Column("source_object_key", sa.String(1024), nullable=True))
    log = sa.table(
        "parsed_log",
        sa.column("id", sa.Integer()),
        sa.column("payload_json", sa.Text()),
        sa.column("source_bucket", sa.String()),
        sa.column("source_object_key", sa.String()),
    )
    fill = (
        sa.update(log)
        .where(log.c.id == sa.bindparam("b_id"))
        .values(source_bucket=sa.bindparam("b_bucket"), source_object_key=sa.bindparam("b_key"))
    )
    conn = op.get_bind()
    after = 0
    while True:  # in id order, a batch at a time: a big log is never read whole
        rows = conn.execute(
            sa.select(log.c.id, log.c.payload_json)
            .where(log.c.id > after)
            .order_by(log.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        sources = [(row_id, _source(payload)) for row_id, payload in rows]
        filled = [
            {"b_id": row_id, "b_bucket": source[0], "b_key": source[1]}
            for row_id, source in sources
            if source is not None
        ]
        if filled:
            conn.execute(fill, filled)
        after = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table("parsed_log") as batch:
        batch.drop_column("source_object_key")
        batch.drop_column("source_bucket")
