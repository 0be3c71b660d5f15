"""Contract kit for the Embedder port.

One class per capability (as Haystack's `haystack/testing/document_store.py` does):
- `EmbedderContract`: dimension, unit vectors, determinism, batches equal singles, empty
  batches. Every Embedder passes it.
- `SemanticSimilarityContract`: vectors carry meaning, in each of `languages`: a paraphrase is
  closer than an unrelated text, and a query finds its passage.
A real model combines them all; a test double (hash vectors) leaves out the second.

Subclass once per adapter and provide the `embedder` fixture (a real model, local or behind a
real server). Set `languages` to what the model claims to serve; the kit checks meaning in
each of them.

    class TestMyEmbedder(EmbedderContract, SemanticSimilarityContract):
        languages = ("en", "zh")

        @pytest.fixture
        def embedder(self) -> Embedder:
            return MyEmbedder(...)  # caches off: the kit must exercise the model itself

Texts are short on purpose: CPU models on a shared machine are slow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from ragline.application.ports.embedder import Embedder

# (anchor, same meaning, unrelated) per language
PAIRS: dict[str, list[tuple[str, str, str]]] = {
    "en": [
        ("The cat sleeps on the sofa.", "A kitten is napping on the couch.", "Stock prices fell."),
        ("How do I reset my password?", "Steps to change a forgotten password", "Rain in Paris"),
    ],
    "zh": [
        ("今天天气很好，阳光明媚。", "今天是个晴朗的好天气。", "这台电脑的内存不足。"),
        ("如何重置我的密码？", "忘记密码后怎么修改", "长江是中国最长的河流。"),
    ],
}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


class EmbedderContract:
    """The behaviour every Embedder must show (real models and test doubles alike)."""

    @pytest.fixture
    def embedder(self) -> Embedder:
        raise NotImplementedError("subclass and return the adapter under test")

    def test_vectors_have_the_declared_dimension(self, embedder: Embedder) -> None:
        assert embedder.dimension > 0
        assert embedder.model_name
        [doc] = embedder.embed_documents(["dimension check"])
        assert len(doc) == embedder.dimension
        assert len(embedder.embed_query("dimension check")) == embedder.dimension

    def test_vectors_are_normalised(self, embedder: Embedder) -> None:
        vectors = [*embedder.embed_documents(["one", "二", ""]), embedder.embed_query("three")]
        for vector in vectors:
            assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-3)

    def test_deterministic(self, embedder: Embedder) -> None:
        first = embedder.embed_documents(["the same text", "同一段文字"])
        again = embedder.embed_documents(["the same text", "同一段文字"])
        for a, b in zip(first, again, strict=True):
            assert cosine(a, b) == pytest.approx(1.0, abs=1e-5)

    def test_batch_equals_single_in_order(self, embedder: Embedder) -> None:
        texts = ["a short one", "a much longer sentence with many more words in it", "短句", "x"]
        batch = embedder.embed_documents([*texts, texts[0]])
        assert len(batch) == len(texts) + 1
        for text, vector in zip(texts, batch, strict=False):
            [single] = embedder.embed_documents([text])
            assert cosine(single, vector) == pytest.approx(1.0, abs=1e-4)
        assert cosine(batch[0], batch[-1]) == pytest.approx(1.0, abs=1e-5)
        assert cosine(batch[0], batch[1]) < 0.999  # different texts, different vectors

    def test_queries_batch_equals_single(self, embedder: Embedder) -> None:
        queries = ["where is the station", "火车站在哪里"]
        for query, vector in zip(queries, embedder.embed_queries(queries), strict=True):
            assert cosine(embedder.embed_query(query), vector) == pytest.approx(1.0, abs=1e-4)

    def test_empty_list_gives_no_vectors(self, embedder: Embedder) -> None:
        assert embedder.embed_documents([]) == []
        assert embedder.embed_queries([]) == []


class SemanticSimilarityContract:
    """Capability: the vectors carry meaning in each of `languages`. Needs the `embedder`
    fixture of `EmbedderContract`."""

    languages: tuple[str, ...] = ("en",)

    def test_similar_meaning_is_closer_than_unrelated(self, embedder: Embedder) -> None:
        for language in self.languages:
            for anchor, same, other in PAIRS[language]:
                a, s, o = embedder.embed_documents([anchor, same, other])
                assert cosine(a, s) > cosine(a, o), (language, anchor)

    def test_query_finds_its_passage(self, embedder: Embedder) -> None:
        for language in self.languages:
            passages = [same for _, same, _ in PAIRS[language]] + [
                other for _, _, other in PAIRS[language]
            ]
            vectors = embedder.embed_documents(passages)
            for i, (anchor, _, _) in enumerate(PAIRS[language]):
                query = embedder.embed_query(anchor)
                scores = [cosine(query, v) for v in vectors]
                assert max(range(len(scores)), key=scores.__getitem__) == i, (language, anchor)
