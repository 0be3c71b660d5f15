"""The pgvector layout: documented DDL that `ensure_collection` runs idempotently, and the
registry of collections (dimension, layout) with the upgrade from older layouts.

Why not the Alembic chain: the dense column is typed by the embedder's dimension, known only
when the first collection is ensured; the index may live in another database than the
application's (RAGLINE_PGVECTOR_URL); and the main chain also runs on SQLite and MariaDB,
where `vector` does not exist. So the DDL is here, every statement `IF NOT EXISTS`, run
under a transaction-scoped advisory lock (two workers starting at once do not race on the
catalog), and `ragline_vector_collections.layout` records which layout a collection has,
for a later change to migrate from.

Per collection `<name>` (one dense dimension per collection, recorded in the registry row):
- `<name>_points`: one row per (user_id, dataset_id, chunk_id) with the payload (`meta`: the
  document's metadata in the flat form `DocumentMetadata.indexed()`, jsonb), the dense
  `vector(<dimension>)` (NULL until VECTORIZING wrote it), `has_sparse` (the N of the IDF)
  and an integer `id` the postings point at; an HNSW index (`vector_cosine_ops`,
  m / ef_construction) and a btree on (user_id, dataset_id, doc_id) for the scope filter
  and document deletes.
- `<name>_terms`: the sparse postings (term, weight) of each point, keyed by
  (scope_key, term, point_id) so a query reads only its terms' postings in one scope. All
  integers (~60 B a row where text keys took ~125): a chunk has ~60 postings. scope_key is
  the first 8 bytes of sha256(user_id, dataset_id) (`scope_key`); the hits are joined back
  to their points on the real user_id + dataset_id, so even a colliding key (odds ~2^-64
  per pair of scopes) could never show one tenant another's chunk. Postings go with their
  point (ON DELETE CASCADE, via the point_id btree).

Shadow generations (issue 21, `VectorSpaces`): generation 0 is the collection itself; a
later generation of dimension d is a collection of its own, `<name>_g<generation>_d<d>`
(`space_name`), with the same layout and its own registry row, shared by every user whose
copy targets that (generation, dimension). A user's removal from a space is by user_id
(the primary key's leading column); in generation 0 it takes only the dense vectors.

Layouts: 1 had no `meta`; 2 adds it (`upgrade_ddl`), run once by the first process that
opens a layout-1 collection, which then records layout 2.
"""

from __future__ import annotations

import hashlib
import logging
import re
import zlib

import attrs
from pgvector.sqlalchemy import VECTOR
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Identity,
    MetaData,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, REAL
from sqlalchemy.ext.asyncio import AsyncConnection

from ragline.application.ports.vector_index import VectorIndexError

LAYOUT = 2
REGISTRY = "ragline_vector_collections"
LOCK_KEY = zlib.crc32(REGISTRY.encode())  # the advisory lock serialising the DDL
MAX_NAME = 48  # with `_points` / `_points_hnsw` appended, well under 63 bytes
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,47}")
_REGISTRY_EXISTS = (
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
    " ON n.oid = c.relnamespace WHERE c.relname = :t AND n.nspname = current_schema())"
)
_log = logging.getLogger(__name__)


def scope_key(user_id: str, dataset_id: str) -> int:
    """The postings' integer stand-in for (user_id, dataset_id): a signed 64-bit hash."""
    key = f"{user_id}\x1f{dataset_id}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big", signed=True)


def checked_name(name: str) -> str:
    """A collection name becomes part of table names: lower-case letters, digits, `_`."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"collection name {name!r}: use [a-z_][a-z0-9_]{{0,47}}")
    return name


def space_name(name: str, generation: int, dimension: int) -> str:
    """The collection of a shadow generation of collection `name` (issue 21):
    `<name>_g<generation>_d<dimension>`, its base cut short and a hash of the whole added
    when that would pass the name limit (PostgreSQL's identifiers stop at 63 bytes)."""
    suffix = f"_g{int(generation)}_d{int(dimension)}"
    whole = checked_name(name) + suffix
    if len(whole) <= MAX_NAME:
        return checked_name(whole)
    digest = hashlib.sha256(whole.encode()).hexdigest()[:8]
    return checked_name(f"{name[: max(MAX_NAME - len(suffix) - 9, 1)]}_{digest}{suffix}")


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
        Column("id", BigInteger, Identity(always=True), unique=True),
        Column("user_id", Text, primary_key=True),
        Column("dataset_id", Text, primary_key=True),
        Column("chunk_id", Text, primary_key=True),
        Column("doc_id", Text, nullable=False),
        Column("parent_id", Text),
        Column("extra", JSONB, nullable=False),
        Column("meta", JSONB, nullable=False),
        Column("dense", VECTOR(dimension)),
        Column("has_sparse", Boolean, nullable=False),
    )
    terms = Table(
        f"{name}_terms",
        meta,
        Column("scope_key", BigInteger, primary_key=True),
        Column("term", BigInteger, primary_key=True),
        Column("point_id", BigInteger, primary_key=True),
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
        " id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,"
        " user_id text NOT NULL, dataset_id text NOT NULL, chunk_id text NOT NULL,"
        " doc_id text NOT NULL, parent_id text, extra jsonb NOT NULL,"
        " meta jsonb NOT NULL DEFAULT '{}',"
        f" dense vector({dimension}), has_sparse boolean NOT NULL DEFAULT false,"
        " PRIMARY KEY (user_id, dataset_id, chunk_id))",
        f"CREATE INDEX IF NOT EXISTS {name}_points_doc"
        f" ON {name}_points (user_id, dataset_id, doc_id)",
        f"CREATE INDEX IF NOT EXISTS {name}_points_hnsw ON {name}_points"
        " USING hnsw (dense vector_cosine_ops)"
        f" WITH (m = {m}, ef_construction = {ef_construction})",
        f"CREATE TABLE IF NOT EXISTS {name}_terms ("
        " scope_key bigint NOT NULL, term bigint NOT NULL, point_id bigint NOT NULL"
        f" REFERENCES {name}_points (id) ON DELETE CASCADE, weight real NOT NULL,"
        " PRIMARY KEY (scope_key, term, point_id))",
        f"CREATE INDEX IF NOT EXISTS {name}_terms_point ON {name}_terms (point_id)",
    ]


def upgrade_ddl(name: str, layout: int) -> list[str]:
    """Statements bringing one collection from `layout` to LAYOUT (each idempotent)."""
    name = checked_name(name)
    statements: list[str] = []
    if layout < 2:  # a constant default: PostgreSQL 11+ adds the column without a rewrite
        statements.append(
            f"ALTER TABLE {name}_points ADD COLUMN IF NOT EXISTS meta jsonb NOT NULL DEFAULT '{{}}'"
        )
    return statements


async def lock_ddl(conn: AsyncConnection) -> None:
    """Hold the DDL lock until the transaction ends (two workers never race on the catalog)."""
    await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": LOCK_KEY})


async def register(conn: AsyncConnection, name: str, dimension: int) -> None:
    """Record a collection just created (at LAYOUT); a first registration stays."""
    await conn.execute(
        text(
            f"INSERT INTO {REGISTRY} (name, dimension, layout)"  # nosec B608
            " VALUES (:n, :d, :l) ON CONFLICT (name) DO NOTHING"
        ),
        {"n": name, "d": dimension, "l": LAYOUT},
    )


async def stored_dimension(conn: AsyncConnection, name: str) -> int | None:
    """The registered dimension of collection `name` (None: not registered), its layout
    brought up to LAYOUT first."""
    # pg_class read under the statement's snapshot, not to_regclass: that one answers
    # from the backend's catalog cache, whose "no such table" from an earlier
    # transaction outlives another worker's commit while we waited for the lock
    present = await conn.execute(text(_REGISTRY_EXISTS), {"t": REGISTRY})
    if not present.scalar_one():
        return None
    row = (
        await conn.execute(
            text(f"SELECT dimension, layout FROM {REGISTRY} WHERE name = :n"),  # nosec B608
            {"n": name},
        )
    ).first()
    if row is None:
        return None
    if not 1 <= int(row.layout) <= LAYOUT:
        raise VectorIndexError(
            f"collection {name!r} has layout {row.layout}, this ragline knows {LAYOUT}"
        )
    if int(row.layout) < LAYOUT:
        await _upgrade(conn, name)
    return int(row.dimension)


async def _upgrade(conn: AsyncConnection, name: str) -> None:
    """Bring a collection of an older layout to LAYOUT once: under the DDL lock, re-read
    the layout, run `upgrade_ddl`, record the new layout by compare-and-set."""
    await lock_ddl(conn)
    found = await conn.execute(
        text(f"SELECT layout FROM {REGISTRY} WHERE name = :n"),  # nosec B608
        {"n": name},
    )
    layout = int(found.scalar_one())
    if layout == LAYOUT:  # another process upgraded it while we waited for the lock
        return
    for statement in upgrade_ddl(name, layout):
        await conn.execute(text(statement))
    updated = await conn.execute(
        text(f"UPDATE {REGISTRY} SET layout = :new WHERE name = :n AND layout = :old"),  # nosec B608
        {"new": LAYOUT, "n": name, "old": layout},
    )
    if updated.rowcount != 1:
        raise VectorIndexError(f"collection {name!r}: its layout changed during the upgrade")
    _log.info("pgvector: collection %s upgraded from layout %d to %d", name, layout, LAYOUT)
