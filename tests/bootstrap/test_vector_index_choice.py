"""Which vector index the container builds when `vector_index` is left empty."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragline.bootstrap import factories
from ragline.bootstrap.settings import Settings, VectorVendor


def test_a_fresh_data_dir_gets_the_embedded_index(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.resolved_vector_index is VectorVendor.EMBEDDED
    assert asyncio.run(_built_index(settings)) == "EmbeddedVectorIndex"


async def _built_index(settings: Settings) -> str:
    resource = factories.vector_index(settings)
    name = type(await anext(resource)).__name__
    await resource.aclose()  # the resource closes the index it opened
    return name


def test_a_qdrant_url_selects_qdrant(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, qdrant_url="http://127.0.0.1:6333")
    assert settings.resolved_vector_index is VectorVendor.QDRANT


def test_a_data_dir_built_with_qdrant_local_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "qdrant").mkdir()
    assert Settings(data_dir=tmp_path).resolved_vector_index is VectorVendor.QDRANT
    (tmp_path / "vectors").mkdir()  # both present: the embedded index was chosen since
    assert Settings(data_dir=tmp_path).resolved_vector_index is VectorVendor.EMBEDDED


def test_an_explicit_choice_wins(tmp_path: Path) -> None:
    (tmp_path / "qdrant").mkdir()
    settings = Settings(data_dir=tmp_path, vector_index=VectorVendor.EMBEDDED)
    assert settings.resolved_vector_index is VectorVendor.EMBEDDED
    settings = Settings(data_dir=tmp_path / "new", vector_index=VectorVendor.QDRANT)
    assert settings.resolved_vector_index is VectorVendor.QDRANT


def test_pgvector_is_built_on_its_url_or_the_database(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        vector_index=VectorVendor.PGVECTOR,
        database_url="postgresql+psycopg://app@db.example/ragline",
    )
    assert settings.resolved_pgvector_url == "postgresql+psycopg://app@db.example/ragline"
    assert settings.adapter_labels["vector_index"] == "pgvector"
    assert asyncio.run(_built_index(settings)) == "PgvectorVectorIndex"  # connects lazily
    own = Settings(data_dir=tmp_path, pgvector_url="postgresql://vectors@db.example/v")
    assert own.resolved_pgvector_url == "postgresql://vectors@db.example/v"


def test_pgvector_on_an_embedded_database_names_the_setting(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, vector_index=VectorVendor.PGVECTOR)
    with pytest.raises(ValueError, match="RAGLINE_PGVECTOR_URL"):
        asyncio.run(_built_index(settings))
