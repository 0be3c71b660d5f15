"""QdrantVectorIndex through the VectorIndex kit in local mode (on disk and in memory), plus
persistence, the one-client-per-path rule and the process lock.

No installable package ships the Qdrant server binary (Debian, PyPI and npm checked;
docs/operations.md#vector-index-sizing says what was found), so `url=` mode is not exercised
here; it is the same code path with qdrant-client's remote transport.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragline.adapters.vector_index.qdrant import QdrantVectorIndex
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.vector_index import VectorIndex, VectorIndexUnavailable
from ragline.testing.kits.vector_index import (
    DATASET,
    DIM,
    E1,
    E2,
    USER,
    FilteredTopKContract,
    IdfSparseRankingContract,
    MetadataFilterContract,
    VectorIndexContract,
    VectorSpacesContract,
    dense,
    ids,
    sparse,
    sv,
)


class TestQdrantLocalPath(
    VectorIndexContract,
    IdfSparseRankingContract,
    FilteredTopKContract,
    MetadataFilterContract,
    VectorSpacesContract,
):
    @pytest.fixture
    async def vector_index(self, tmp_path: Path) -> AsyncIterator[VectorIndex]:
        yield QdrantVectorIndex("kit", path=str(tmp_path / "qdrant"))


class TestQdrantInMemory(
    VectorIndexContract,
    IdfSparseRankingContract,
    FilteredTopKContract,
    MetadataFilterContract,
    VectorSpacesContract,
):
    @pytest.fixture
    async def vector_index(self) -> AsyncIterator[VectorIndex]:
        yield QdrantVectorIndex("kit", location=":memory:")


async def test_points_survive_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "q")
    first = QdrantVectorIndex(path=path)
    await first.ensure_collection(DIM)
    await first.upsert_dense([dense("a", E1)])
    await first.upsert_sparse([sparse("a", {9: 1.0})])
    await first.close()

    again = QdrantVectorIndex(path=path)
    with pytest.raises(EmbeddingDimensionMismatch):
        await again.ensure_collection(DIM * 2)
    assert ids(await again.query_dense(USER, DATASET, E1, 5)) == ["a"]
    assert ids(await again.query_sparse(USER, DATASET, sv({9: 1.0}), 5)) == ["a"]
    await again.upsert_dense([dense("b", E2)])  # dimension read back from the collection
    assert ids(await again.query_dense(USER, DATASET, E2, 1)) == ["b"]
    await again.close()


async def test_two_adapters_on_one_path_share_the_client(tmp_path: Path) -> None:
    path = str(tmp_path / "q")
    writer, reader = QdrantVectorIndex(path=path), QdrantVectorIndex(path=path)
    await writer.ensure_collection(DIM)
    await writer.upsert_dense([dense("a", E1)])
    assert ids(await reader.query_dense(USER, DATASET, E1, 5)) == ["a"]
    await writer.close()
    assert ids(await reader.query_dense(USER, DATASET, E1, 5)) == ["a"]  # still open
    await reader.close()


def test_a_path_held_by_another_process_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "q"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, qdrant_client; c = qdrant_client.QdrantClient(path=sys.argv[1]);"
            " print('ready', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(VectorIndexUnavailable):
            QdrantVectorIndex(path=str(path))
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_exactly_one_location_is_required() -> None:
    with pytest.raises(ValueError):
        QdrantVectorIndex()
    with pytest.raises(ValueError):
        QdrantVectorIndex(location=":memory:", url="http://127.0.0.1:6333")
    with pytest.raises(ValueError):
        QdrantVectorIndex(location="/tmp/x")


async def test_closed_index_refuses_calls() -> None:
    index = QdrantVectorIndex(location=":memory:")
    await index.close()
    await index.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        await index.query_dense(USER, DATASET, E1, 1)


async def test_local_storage_is_switched_to_wal(tmp_path: Path) -> None:
    """Guards the write-speed fix (one fsync per point otherwise): if qdrant-client's private
    storage shape changes, this fails instead of ingest silently slowing down 20x."""
    index = QdrantVectorIndex("walcheck", path=str(tmp_path / "q"))
    await index.ensure_collection(DIM)
    await index.upsert_dense([dense("a", E1)])
    storages = list((tmp_path / "q").rglob("storage.sqlite"))
    assert len(storages) == 2  # the dimension anchor and the scope's collection
    for storage in storages:
        with sqlite3.connect(storage) as probe:
            assert probe.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await index.close()
