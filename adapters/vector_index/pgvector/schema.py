"""The pgvector layout: documented DDL that `ensure_collection` runs idempotently.

Why not the Alembic chain: the dense column is typed by the embedder's dimension, known only
when the first collection is ensured; the index may live in another database than the
application's (RAGLINE_PGVECTOR_URL); and the main chain also runs on SQLite and MariaDB,
where `vector` does not exist. So the DDL is here, every statement `IF NOT EXISTS`, run
under a transaction-scoped advisory lock (two workers starting at once do not race on the
catalog), and `ragline_vector_collections.layout` records which layout a collection has,
for a later change to migrate from.

Per collection `<name>` (one dense dimension per collection, recorded in the registry row):
- `<name>_points`: one row per (user_id, dataset_id, chunk_id) with the payload, the dense
  `vector(<dimension>)` (NULL until VECTORIZING wrote it) and `has_sparse` (the N of the IDF);
  an HNSW index (`vector_cosine_ops`, m / ef_construction) and a btree on
  (user_id, dataset_id, doc_id) for the scope filter and document deletes.
- `<name>_terms`: the sparse postings (term, weight) of each point, keyed by
  (user_id, dataset_id, term, chunk_id) so a query reads only its terms' postings in one
  scope; rows go with their point (ON DELETE CASCADE).
"""

from __future__ import annotations

import re

import attrs
from pgvector.sqlalchemy import VECTOR
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB, REAL

LAYOUT = 1
REGISTRY = "ragline_vector_collections"
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,47}")


def checked_name(name: str) -> str:
    """A collection name becomes part of table names: lower-case letters, digits, `_`."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"collection name {name!r}: use [a-z_][a-z0-9_]{{0,47}}")
    return name


@attrs.frozen
class Tables:
    points: Table
    terms: Table


def tables(name: str, dimension: int) -> Tables:
    """SQLAlchemy Core tables of one collection (for statements, not for creating them)."""
    meta = MetaData()
    points = Table(
        f"{name}_points",
        meta,
        Column("user_id", Text, primary_key=True),
        Column("dataset_id", Text, primary_key=True),
        Column("chunk_id", Text, primary_key=True),
        Column("doc_id", Text, nullable=False),
        Column("parent_id", Text),
        Column("extra", JSONB, nullable=False),
        Column("dense", VECTOR(dimension)),
        Column("has_sparse", Boolean, nullable=False),
    )
    terms = Table(
        f"{name}_terms",
        meta,
        Column("user_id", Text, primary_key=True),
        Column("dataset_id", Text, primary_key=True),
        Column("term", BigInteger, primary_key=True),
        Column("chunk_id", Text, primary_key=True),
        Column("weight", REAL, nullable=False),
    )
    return Tables(points=points, terms=terms)


def registry_ddl() -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {REGISTRY} ("
        " name text PRIMARY KEY, dimension integer NOT NULL, layout integer NOT NULL)"
    ]


def collection_ddl(name: str, dimension: int, m: int, ef_construction: int) -> list[str]:
    """Statements creating one collection's tables and indexes (names checked, numbers
    ints: nothing of a caller's text reaches the SQL)."""
    name, dimension, m, ef_construction = (
        checked_name(name),
        int(dimension),
        int(m),
        int(ef_construction),
    )
    return [
        f"CREATE TABLE IF NOT EXISTS {name}_points ("
        " user_id text NOT NULL, dataset_id text NOT NULL, chunk_id text NOT NULL,"
        " doc_id text NOT NULL, parent_id text, extra jsonb NOT NULL,"
        f" dense vector({dimension}), has_sparse boolean NOT NULL DEFAULT false,"
        " PRIMARY KEY (user_id, dataset_id, chunk_id))",
        f"CREATE INDEX IF NOT EXISTS {name}_points_doc"
        f" ON {name}_points (user_id, dataset_id, doc_id)",
        f"CREATE INDEX IF NOT EXISTS {name}_points_hnsw ON {name}_points"
        " USING hnsw (dense vector_cosine_ops)"
        f" WITH (m = {m}, ef_construction = {ef_construction})",
        f"CREATE TABLE IF NOT EXISTS {name}_terms ("
        " user_id text NOT NULL, dataset_id text NOT NULL, term bigint NOT NULL,"
        " chunk_id text NOT NULL, weight real NOT NULL,"
        " PRIMARY KEY (user_id, dataset_id, term, chunk_id),"
        " FOREIGN KEY (user_id, dataset_id, chunk_id)"
        f" REFERENCES {name}_points (user_id, dataset_id, chunk_id) ON DELETE CASCADE)",
        f"CREATE INDEX IF NOT EXISTS {name}_terms_point"
        f" ON {name}_terms (user_id, dataset_id, chunk_id)",
    ]
