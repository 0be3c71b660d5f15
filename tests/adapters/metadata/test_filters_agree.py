"""Random filter trees over random labels: the embedded vector index and Qdrant (in memory;
dense and sparse) and Tantivy keep exactly the documents `ragline.domain.metadata.matches`
keeps. The kits check each operator by hand; this looks for the combinations nobody wrote
down."""

from __future__ import annotations

import asyncio
import random
from datetime import date, timedelta
from pathlib import Path

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.keyword_index.tantivy import TantivyKeywordIndex
from ragline.adapters.vector_index.embedded import EmbeddedVectorIndex
from ragline.adapters.vector_index.qdrant import QdrantVectorIndex
from ragline.application.ports.vector_index import DensePoint, SparsePoint
from ragline.domain.metadata import (
    AllOf,
    AnyOf,
    DocumentMetadata,
    Eq,
    Exists,
    In,
    MetadataFilter,
    Range,
    matches,
)
from ragline.testing.kits.keyword_index import doc
from ragline.testing.kits.vector_index import DATASET, USER, payload, sv

KEYS = ("a", "b", "c")
WORDS = ("x", "y", "z")
DAY = date(2020, 1, 1)


def _labels(rng: random.Random) -> DocumentMetadata:
    values: dict[str, object] = {}
    for key in KEYS:
        kind = rng.randrange(5)
        if kind == 0:
            values[key] = rng.choice(WORDS)
        elif kind == 1:
            values[key] = rng.choice([-2, -0.5, 0, 1, 1.5, 3])
        elif kind == 2:
            values[key] = DAY + timedelta(days=rng.randrange(-3, 4))
        elif kind == 3:
            values[key] = rng.sample(WORDS, rng.randrange(3))
    return DocumentMetadata(values)


CORPUS = {f"d{i}": _labels(random.Random(i)) for i in range(40)}

keys = st.sampled_from(KEYS)
numbers = st.sampled_from([-2, -1.25, -0.5, 0, 0.75, 1, 1.5, 3])
days = st.integers(-4, 4).map(lambda n: DAY + timedelta(days=n))
leaves = st.one_of(
    st.builds(Eq, keys, st.one_of(st.sampled_from(WORDS), numbers, days)),
    st.builds(In, keys, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.builds(Range, keys, gte=numbers, lt=st.one_of(st.none(), numbers)).filter(
        lambda r: r is not None
    ),
    st.builds(Range, keys, gt=days, lte=days),
    st.builds(Exists, keys),
)
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(AllOf, st.lists(inner, min_size=1, max_size=3)),
        st.builds(AnyOf, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


def test_engines_keep_what_matches_keeps(tmp_path: Path) -> None:
    indexes = {
        "embedded": EmbeddedVectorIndex(tmp_path / "vectors"),
        "qdrant": QdrantVectorIndex("agree", location=":memory:"),
    }
    keywords = TantivyKeywordIndex(tmp_path / "tantivy")

    async def fill() -> None:
        points = [
            DensePoint(d, [1.0, i / 40, 0, 0], attrs.evolve(payload(doc_id=d), metadata=m))
            for i, (d, m) in enumerate(CORPUS.items())
        ]
        sparse = [SparsePoint(p.chunk_id, sv({1: 1.0}), p.payload) for p in points]
        for vectors in indexes.values():
            await vectors.ensure_collection(4)
            await vectors.upsert_dense(points)
            await vectors.upsert_sparse(sparse)
        await keywords.write(
            [attrs.evolve(doc(d, "tea", doc_id=d), metadata=m) for d, m in CORPUS.items()]
        )

    asyncio.run(fill())

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(trees)
    def agree(where: MetadataFilter) -> None:
        expected = {d for d, m in CORPUS.items() if matches(where, m.indexed())}

        async def ask() -> dict[str, set[str]]:
            found = {}
            for name, vectors in indexes.items():
                dense = await vectors.query_dense(USER, DATASET, [1.0, 0, 0, 0], 100, where)
                sparse = await vectors.query_sparse(USER, DATASET, sv({1: 1.0}), 100, where)
                found[f"{name} dense"] = {h.chunk_id for h in dense}
                found[f"{name} sparse"] = {h.chunk_id for h in sparse}
            bm25 = await keywords.search(USER, DATASET, ["tea"], 100, where)
            found["tantivy"] = {h.chunk_id for h in bm25}
            return found

        for engine, found in asyncio.run(ask()).items():
            assert found == expected, (engine, where)

    try:
        agree()
    finally:

        async def close() -> None:
            for vectors in indexes.values():
                await vectors.close()
            await keywords.close()

        asyncio.run(close())
