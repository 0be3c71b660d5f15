"""Ranking metrics and the snippet rule, against figures computed by hand."""

import math

import pytest

from ragline.domain.evaluation import (
    RankingScore,
    contains_snippet,
    mean_scores,
    recall_within,
    score_ranking,
)


def test_answer_first_scores_one_everywhere() -> None:
    assert score_ranking([1], 1) == RankingScore((1.0, 1.0, 1.0), 1.0, 1.0)


def test_answer_at_rank_three() -> None:
    score = score_ranking([3], 1)
    assert score.recall == (0.0, 1.0, 1.0)
    assert score.mrr == pytest.approx(1 / 3)
    assert score.ndcg == pytest.approx(1 / math.log2(4))  # 0.5


def test_answer_at_rank_seven_misses_r5_but_not_r10() -> None:
    score = score_ranking([7], 1)
    assert score.recall == (0.0, 0.0, 1.0)
    assert score.mrr == pytest.approx(1 / 7)
    assert score.ndcg == pytest.approx(1 / 3)  # 1 / log2(8)


def test_answer_beyond_ten_counts_nothing() -> None:
    assert score_ranking([11], 1) == RankingScore((0.0, 0.0, 0.0), 0.0, 0.0)
    assert score_ranking([], 1) == RankingScore((0.0, 0.0, 0.0), 0.0, 0.0)


def test_two_relevant_documents_at_ranks_one_and_four() -> None:
    score = score_ranking([4, 1], 2)
    assert score.recall == (0.5, 1.0, 1.0)
    assert score.mrr == 1.0
    # DCG = 1/log2(2) + 1/log2(5) = 1 + 0.4307; ideal = 1 + 1/log2(3) = 1.6309
    assert score.ndcg == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))


def test_three_relevant_one_found_at_two() -> None:
    score = score_ranking([2], 3)
    assert score.recall == pytest.approx((0.0, 1 / 3, 1 / 3))
    assert score.mrr == 0.5
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert score.ndcg == pytest.approx((1 / math.log2(3)) / ideal)


@pytest.mark.parametrize(("found", "relevant"), [([1, 1], 2), ([0], 1), ([1, 2], 1), ([], 0)])
def test_impossible_rankings_are_refused(found: list[int], relevant: int) -> None:
    with pytest.raises(ValueError):
        score_ranking(found, relevant)


def test_mean_over_questions() -> None:
    mean = mean_scores([score_ranking([1], 1), score_ranking([3], 1), score_ranking([], 1)])
    assert mean.recall == pytest.approx((1 / 3, 2 / 3, 2 / 3))
    assert mean.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert mean.ndcg == pytest.approx((1 + 0.5) / 3)
    assert mean.recall_at(5) == pytest.approx(2 / 3)
    assert mean_scores([]) == RankingScore((0.0, 0.0, 0.0), 0.0, 0.0)


def test_snippet_matches_across_reflowed_whitespace() -> None:
    text = "Set the\nvariable  LANG\u00a0to C.UTF-8\tbefore running it."
    assert contains_snippet("variable LANG to C.UTF-8", text)
    assert not contains_snippet("variable LANG to C", "something else")


def test_snippet_in_the_parent_counts() -> None:
    assert contains_snippet("the whole answer", "the whole", "here is the whole answer.")
    assert not contains_snippet("the whole answer", "the whole", None)


def test_blank_snippet_is_refused() -> None:
    with pytest.raises(ValueError):
        contains_snippet(" \n", "text")


def test_candidate_recall_at_depth_counts_ranks_up_to_the_depth() -> None:
    assert recall_within([40], 1, 40) == 1.0
    assert recall_within([41], 1, 40) == 0.0
    assert recall_within([41], 1, 100) == 1.0
    assert recall_within([], 1, 200) == 0.0
    assert recall_within([3, 150], 2, 100) == 0.5


def test_candidate_recall_refuses_a_depth_below_one() -> None:
    with pytest.raises(ValueError):
        recall_within([1], 1, 0)
