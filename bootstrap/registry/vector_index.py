"""Vector index vendors (RAGLINE_VECTOR_INDEX)."""

from __future__ import annotations

from collections.abc import Callable

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


VECTOR_INDEX: Port[VectorVendor, Build] = Port(
    part="vector_index",
    setting="vector_index",
    names=VectorVendor,
    # a new vendor: its factory above and one line here (docs/design/0007-vendor-registry.md)
    vendors={
        VectorVendor.EMBEDDED: Vendor(embedded, "embedded"),
        VectorVendor.QDRANT: Vendor(qdrant, "qdrant", lambda s: s.qdrant.url or "local"),
    },
    chosen=lambda settings: settings.resolved_vector_index,
)
