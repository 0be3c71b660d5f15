"""`ragline doctor` advises a scale-out vector store when a scope of the embedded index (an
exact scan) passes the size benchmarks/vector_scale measured (issue 20 item 5); the tests
use a small threshold instead of writing hundreds of thousands of points."""

from __future__ import annotations

from pathlib import Path

from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.application.health import CheckHealth, adapter_probes
from ragline.application.ports.vector_index import ChunkPayload, DensePoint
from ragline.application.provisioning import DefaultEmbedding
from tests.e2e.ragline_process import run


async def _index_with(path: Path, sizes: dict[str, int]) -> EmbeddedVectorIndex:
    """Dense points of dimension 4: `sizes[user]` of them in the scope (user, "d")."""
    index = EmbeddedVectorIndex(path)
    await index.ensure_collection(4)
    for owner, count in sizes.items():
        payload = ChunkPayload(owner, "d", "doc")
        await index.upsert_dense(
            [DensePoint(f"c{i}", [1.0, 0.0, 0.0, float(i)], payload) for i in range(count)]
        )
    return index


async def test_the_largest_scope_counts_dense_points_of_one_scope(tmp_path: Path) -> None:
    index = await _index_with(tmp_path, {"a": 3, "b": 5, "c": 1})
    try:
        assert await index.largest_scope() == 5
    finally:
        await index.close()
    empty = EmbeddedVectorIndex(tmp_path / "empty")
    try:
        await empty.ensure_collection(4)
        assert await empty.largest_scope() == 0
    finally:
        await empty.close()


async def test_the_vector_check_advises_only_past_the_threshold(tmp_path: Path) -> None:
    index = await _index_with(tmp_path, {"a": 3, "b": 5})

    def checks(threshold: int) -> CheckHealth:
        def broken() -> object:
            raise ConnectionError("not under test")

        labels = dict.fromkeys(
            (
                "database",
                "object_storage",
                "message_bus",
                "vector_index",
                "keyword_index",
                "embedder",
            ),
            "x",
        )
        return CheckHealth(
            adapter_probes(
                labels,
                uow_factory=broken,  # type: ignore[arg-type]
                storage=broken,  # type: ignore[arg-type]
                bucket="b",
                bus=broken,  # type: ignore[arg-type]
                vectors=lambda: index,
                keywords=broken,  # type: ignore[arg-type]
                embedders=broken,  # type: ignore[arg-type]
                default_embedding=DefaultEmbedding("fake", "m", 4),
                advise_scan_above=threshold,
            )
        )

    try:
        [vector] = [c for c in await checks(5)() if c.part == "vector index"]
        assert vector.ok and "largest scope 5 points" in vector.detail
        assert vector.advice == ""
        [vector] = [c for c in await checks(4)() if c.part == "vector index"]
        assert vector.ok, vector.detail
        assert "5 points, more than 4" in vector.advice
        assert "RAGLINE_VECTOR_INDEX=pgvector" in vector.advice
    finally:
        await index.close()


async def test_doctor_prints_the_advice(tmp_path: Path) -> None:
    data = tmp_path / "data"
    index = await _index_with(data / "vectors", {"1": 3})
    await index.close()
    (tmp_path / ".env").write_text("RAGLINE_VECTOR_SCAN_ADVICE_POINTS=2\n", encoding="utf-8")
    done = run(data, "doctor")
    shown = " ".join((done.stdout + done.stderr).split())
    assert "largest scope 3 points" in shown, done.explain()
    assert "advice (vector index): the largest scope holds 3 points, more than 2" in shown
    quiet = run(data, "doctor", env={"RAGLINE_VECTOR_SCAN_ADVICE_POINTS": "3"})
    assert "advice (vector index)" not in quiet.stdout + quiet.stderr, quiet.explain()
