"""Reciprocal-rank fusion."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.application.search.fusion import reciprocal_rank_fusion


def test_item_ranked_well_by_every_retriever_wins() -> None:
    fused = reciprocal_rank_fusion(
        {"dense": ["a", "b", "c"], "sparse": ["b", "a", "d"], "bm25": ["b", "c"]}
    )
    assert [item for item, _ in fused] == ["b", "a", "c", "d"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)


def test_limit_and_duplicates_inside_one_list() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "a", "b"]}, limit=1)
    assert fused == [("a", pytest.approx(1 / 61))]


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"dense": ["a"]}, k=0)


ids = st.lists(st.sampled_from("abcdefgh"), max_size=8)


@given(st.dictionaries(st.sampled_from(["dense", "sparse", "bm25"]), ids))
def test_fusion_is_a_deterministic_ranking_of_the_union(rankings: dict[str, list[str]]) -> None:
    fused = reciprocal_rank_fusion(rankings)
    assert {item for item, _ in fused} == {i for ranked in rankings.values() for i in ranked}
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    assert fused == reciprocal_rank_fusion(dict(reversed(list(rankings.items()))))


def test_weights_let_dense_outvote_two_agreeing_lexical_lists() -> None:
    rankings = {"dense": ["para"], "sparse": ["lex", "para"], "bm25": ["lex"]}
    assert reciprocal_rank_fusion(rankings)[0][0] == "lex"  # 2/61 > 1/61 + 1/62
    weighted = reciprocal_rank_fusion(rankings, weights={"dense": 2.0})
    assert weighted[0][0] == "para"
    assert weighted[0][1] == pytest.approx(2 / 61 + 1 / 62)
    assert weighted[1][1] == pytest.approx(2 / 61)


def test_zero_weight_drops_a_retrievers_say_and_negative_is_refused() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a"], "bm25": ["b"]}, weights={"bm25": 0.0})
    assert fused[0] == ("a", pytest.approx(1 / 61)) and fused[1] == ("b", 0.0)
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"dense": ["a"]}, weights={"dense": -1.0})
