"""Vector index vendors (RAGLINE_VECTOR_INDEX)."""

from __future__ import annotations

from collections.abc import Callable

from ragline.application.ports.misconfiguration import Misconfiguration
from ragline.application.ports.vector_index import VectorIndex
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import Settings, VectorVendor

Build = Callable[[Settings], VectorIndex]


def embedded(settings: Settings) -> VectorIndex:
    from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex

    return EmbeddedVectorIndex(settings.data_dir / "vectors")


def qdrant(settings: Settings) -> VectorIndex:
    """The server at qdrant.url, else qdrant-client local mode under the data dir."""
    from ragline.adapters.vector_index.qdrant import QdrantVectorIndex

    chosen = settings.qdrant
    if chosen.url:
        return QdrantVectorIndex(chosen.collection, url=chosen.url)
    path = settings.data_dir / "qdrant"
    path.mkdir(parents=True, exist_ok=True)
    return QdrantVectorIndex(chosen.collection, path=str(path))


class PgvectorUrlMissing(Misconfiguration):
    """vector_index=pgvector with neither its own URL nor a PostgreSQL database."""


def pgvector_url(settings: Settings) -> str:
    """pgvector.url, else the application's database when that is PostgreSQL."""
    url = settings.pgvector.url or settings.resolved_database_url
    if not url.startswith("postgres"):
        raise PgvectorUrlMissing(
            "RAGLINE_VECTOR_INDEX=pgvector needs RAGLINE_PGVECTOR_URL "
            "(or a PostgreSQL RAGLINE_DATABASE_URL)"
        )
    return url


def pgvector(settings: Settings) -> VectorIndex:
    from ragline.adapters.vector_index.pgvector import open_pgvector_index

    chosen = settings.pgvector
    return open_pgvector_index(
        pgvector_url(settings),
        m=chosen.m,
        ef_construction=chosen.ef_construction,
        ef_search=chosen.ef_search,
        exact_scope_points=chosen.exact_scope_points,
    )


VECTOR_INDEX: Port[VectorVendor, Build] = Port(
    part="vector_index",
    setting="vector_index",
    names=VectorVendor,
    # a new vendor: its factory above and one line here (docs/design/0007-vendor-registry.md)
    vendors={
        VectorVendor.EMBEDDED: Vendor(embedded, "embedded"),
        VectorVendor.QDRANT: Vendor(qdrant, "qdrant", lambda s: s.qdrant.url or "local"),
        VectorVendor.PGVECTOR: Vendor(pgvector, "pgvector"),
    },
    chosen=lambda settings: settings.resolved_vector_index,
)
