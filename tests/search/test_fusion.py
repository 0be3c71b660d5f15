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


def test_score_fusion_hears_a_sure_retriever() -> None:
    from ragline.application.search.fusion import score_fusion

    scored = {
        # BM25 is sure of "k" (far above the rest); dense barely prefers "d"
        "bm25": [("k", 30.0), ("d", 3.0), ("x", 2.0)],
        "dense": [("d", 0.86), ("x", 0.85), ("k", 0.84)],
    }
    fused = score_fusion(scored)
    # k: bm25 1 + dense 0 = 1; d: (3-2)/28 + 1; x: 0 + 0.5. "d" still leads here, but with
    # dense at half weight the sure BM25 hit wins
    assert dict(fused) == pytest.approx({"k": 1.0, "d": 1 / 28 + 1.0, "x": 0.5})
    halved = score_fusion(scored, {"dense": 0.5})
    assert [i for i, _ in halved] == ["k", "d", "x"]
    # ranks alone (RRF) give it to "d": rank 1 and 2 beat rank 1 and 3
    assert reciprocal_rank_fusion({n: [i for i, _ in v] for n, v in scored.items()})[0][0] == "d"


def test_score_fusion_weights_equal_scores_and_absence() -> None:
    from ragline.application.search.fusion import score_fusion

    fused = score_fusion({"dense": [("a", 0.5), ("b", 0.5)], "bm25": [("c", 2.0)]}, {"dense": 2})
    assert dict(fused) == {"a": 2.0, "b": 2.0, "c": 1.0}
    assert [i for i, _ in fused] == ["a", "b", "c"]
    assert score_fusion({"dense": []}) == []
    with pytest.raises(ValueError):
        score_fusion({"dense": [("a", 1.0)]}, {"dense": -1})


def test_standardised_fusion_weighs_a_standout_over_an_even_list() -> None:
    from ragline.application.search.fusion import score_fusion

    others = [f"o{n}" for n in range(9)]
    # BM25: "k" stands far out of ten candidates; dense: ten evenly spaced, led by "d"
    bm25 = [("k", 30.0), ("d", 2.0)] + [(o, 1.9 - 0.1 * n) for n, o in enumerate(others[:8])]
    dense = [("d", 0.90)] + [(o, 0.89 - 0.01 * n) for n, o in enumerate(others)]
    scored = {"bm25": bm25, "dense": dense}
    # min-max maps both tops to 1 and "d" gets a little from BM25 too: "d" wins
    assert score_fusion(scored)[0][0] == "d"
    fused = dict(score_fusion(scored, standard=True))

    def spread(values: list[float]) -> float:
        mean = sum(values) / len(values)
        return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5

    b_sd, d_sd = spread([v for _, v in bm25]), spread([v for _, v in dense])
    low_b, low_d = bm25[-1][1], dense[-1][1]
    assert fused["k"] == pytest.approx((30 - low_b) / b_sd)  # absent from dense: its lowest
    assert fused["d"] == pytest.approx((2 - low_b) / b_sd + (0.90 - low_d) / d_sd)
    assert max(fused, key=fused.__getitem__) == "k"
    flat = score_fusion({"dense": [("a", 0.5), ("b", 0.5)]}, standard=True)
    assert dict(flat) == {"a": 0.0, "b": 0.0}
