"""TermSparseEncoder: stable ids, saturated length-normalised tf weights, unit query weights."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.sparse_encoder.term import TermSparseEncoder, term_id
from ragline.adapters.tokenizer.jieba import JiebaTokenizer
from ragline.application.ports.sparse_encoder import SparseVector

encoder = TermSparseEncoder(JiebaTokenizer(), k1=1.2, b=0.75, avg_doc_length=4.0)


def weight(vector_indices: list[int], values: list[float], token: str) -> float:
    return values[vector_indices.index(term_id(token))]


def test_term_ids_are_stable_uint32() -> None:
    # Pinned values: changing the hash would orphan every sparse vector already indexed.
    assert term_id("hello") == 3932620535
    assert term_id("检索") == term_id("检索")
    assert 0 <= term_id("检索") < 2**32


def test_document_weights_follow_bm25_tf() -> None:
    [vec] = encoder.encode_documents(["apple apple banana cherry"])
    assert vec.indices == sorted(vec.indices)
    assert len(vec.indices) == 3
    norm = 1.2 * (1 - 0.75 + 0.75 * 4 / 4.0)  # length == avg length
    assert math.isclose(weight(vec.indices, vec.values, "apple"), 2 * 2.2 / (2 + norm))
    assert math.isclose(weight(vec.indices, vec.values, "banana"), 1 * 2.2 / (1 + norm))


def test_more_occurrences_weigh_more_but_saturate() -> None:
    vecs = encoder.encode_documents(["cat " * n for n in (1, 2, 4, 64)])
    # Compare at a fixed length so only tf changes.
    fixed = encoder.encode_documents(["cat dog dog dog", "cat cat dog dog", "cat cat cat dog"])
    w = [weight(v.indices, v.values, "cat") for v in fixed]
    assert w[0] < w[1] < w[2]
    assert all(weight(v.indices, v.values, "cat") < 1.2 + 1 for v in vecs)


def test_longer_documents_weigh_a_single_occurrence_less() -> None:
    short, long = encoder.encode_documents(["cat dog", "cat " + "dog " * 30])
    assert weight(short.indices, short.values, "cat") > weight(long.indices, long.values, "cat")


def test_query_vector_has_unique_terms_with_weight_one() -> None:
    vec = encoder.encode_query("检索 检索 Search search")
    assert sorted(vec.indices) == sorted({term_id("检索"), term_id("search")})
    assert vec.values == [1.0, 1.0]


def test_empty_texts_give_empty_vectors() -> None:
    assert encoder.encode_documents(["", "  ...  "])[0].is_empty()
    assert encoder.encode_documents(["", "  ...  "])[1].is_empty()
    assert encoder.encode_query("").is_empty()


def test_query_and_document_share_the_term_space() -> None:
    [doc] = encoder.encode_documents(["我们在北京大学学习"])
    query = encoder.encode_query("北京")
    assert set(query.indices) <= set(doc.indices)


@given(st.lists(st.text(max_size=80), max_size=5))
def test_vectors_are_well_formed(texts: list[str]) -> None:
    vecs = encoder.encode_documents(texts)
    assert len(vecs) == len(texts)
    for vec in vecs:
        assert vec.indices == sorted(set(vec.indices))
        assert all(0 < v < 2.2 for v in vec.values)
    assert vecs == encoder.encode_documents(texts)


def test_sparse_vector_needs_parallel_lists() -> None:
    with pytest.raises(ValueError):
        SparseVector([1, 2], [1.0])


def test_token_lists_from_the_same_tokenizer_give_the_document_vectors() -> None:
    texts = ["Green tea wants water at 80 °C.", "绿茶用八十度的水冲泡。", "", "tea tea tea"]
    tokenizer = JiebaTokenizer()
    from_tokens = encoder.encode_token_lists([tokenizer.tokenize(t) for t in texts])
    assert from_tokens == encoder.encode_documents(texts)
    assert not from_tokens[0].is_empty() and from_tokens[2].is_empty()
