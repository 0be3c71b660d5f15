"""RECURSIVE, SEMANTIC and LLM strategies: cuts, sizes, fallbacks; the model never edits text."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from ragline.domain.chunking import (
    ChunkModels,
    ChunkPlan,
    ChunkStep,
    Pipeline,
    SizeUnit,
    SourceType,
    StepParams,
    Strategy,
    WhitespaceCjkTokenCounter,
    chunk_document,
)
from ragline.domain.chunking.strategies.llm import align_proposal
from ragline.domain.chunking.strategies.semantic import percentile

P, C = Pipeline.PARENT, Pipeline.CHILD


def child_plan(strategy: Strategy, params: StepParams) -> ChunkPlan:
    return ChunkPlan(
        "t",
        [
            ChunkStep(P, 1, Strategy.RECURSIVE, StepParams(100_000)),
            ChunkStep(C, 1, strategy, params),
        ],
    )


def children(md: str, plan: ChunkPlan, models: ChunkModels | None = None) -> list[str]:
    result = chunk_document(md, plan, models=models)
    return [c.text for p in result.parents for c in p.children]


def test_recursive_prefers_coarse_separators() -> None:
    md = "para one line one\npara one line two\n\npara two is here\n\npara three"
    got = children(md, child_plan(Strategy.RECURSIVE, StepParams(40)))
    assert got == ["para one line one\npara one line two", "para two is here\n\npara three"]


def test_recursive_cuts_chinese_at_sentence_ends() -> None:
    md = "第一句话在这里。第二句话也在这里！第三句话结束了？"
    got = children(md, child_plan(Strategy.RECURSIVE, StepParams(10)))
    assert got == ["第一句话在这里。", "第二句话也在这里！", "第三句话结束了？"]


def test_recursive_splits_unbroken_text_by_characters() -> None:
    md = "abcdefghijklmnopqrstuvwxy"
    got = children(md, child_plan(Strategy.RECURSIVE, StepParams(10)))
    assert got == ["abcdefghij", "klmnopqrst", "uvwxy"]


def test_recursive_overlap_repeats_the_tail_of_the_previous_piece() -> None:
    md = " ".join(f"w{i}" for i in range(30))
    got = children(md, child_plan(Strategy.RECURSIVE, StepParams(20, overlap=6)))
    assert all(len(t) <= 20 for t in got)
    for a, b in itertools.pairwise(got):
        assert b.split()[0] in a.split()  # the next piece starts inside the previous one


def test_recursive_min_size_merges_small_pieces() -> None:
    md = "a\n\nbb\n\nccccccccccccccccccc\n\nd"
    without = children(md, child_plan(Strategy.RECURSIVE, StepParams(20)))
    with_min = children(md, child_plan(Strategy.RECURSIVE, StepParams(24, min_size=5)))
    assert len(with_min) < len(without)
    assert all(len(t) <= 24 for t in with_min)


def test_token_sizing_counts_words_and_cjk_characters() -> None:
    counter = WhitespaceCjkTokenCounter()
    assert counter.count("hello world 你好") == 4
    md = "one two three four five six seven eight nine ten. 一二三四五六七八九十。"
    got = children(md, child_plan(Strategy.RECURSIVE, StepParams(6, unit=SizeUnit.TOKENS)))
    assert all(counter.count(t) <= 6 for t in got)
    assert "".join(got).replace(" ", "") == md.replace(" ", "")


class TopicEmbedder:
    """Sentences about cats and about cars point in different directions (a port double: the
    thing under test is the breakpoint logic)."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [[t.count("cat") + 0.01, t.count("car") + 0.01] for t in texts]


CATS_THEN_CARS = (
    "The cat sleeps. A cat purrs. My cat eats. The cat plays. "
    "The car drives. A car stops. My car honks. The car parks."
)


def test_semantic_cuts_where_the_topic_changes_and_batches() -> None:
    emb = TopicEmbedder()
    plan = child_plan(Strategy.SEMANTIC, StepParams(80, percentile=80.0, batch_size=3))
    result = chunk_document(CATS_THEN_CARS, plan, models=ChunkModels(embedder=emb))
    got = [c for p in result.parents for c in p.children]
    assert [c.text for c in got] == [
        "The cat sleeps. A cat purrs. My cat eats. The cat plays.",
        "The car drives. A car stops. My car honks. The car parks.",
    ]
    assert {c.source_type for c in got} == {SourceType.SEMANTIC}
    assert emb.calls == [3, 3, 2]  # 8 sentences in batches of 3
    assert result.report.fallbacks == 0


class BrokenEmbedder:
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model down")


@pytest.mark.parametrize("embedder", [None, BrokenEmbedder()])
def test_semantic_falls_back_to_recursive(embedder: BrokenEmbedder | None) -> None:
    plan = child_plan(Strategy.SEMANTIC, StepParams(80))
    result = chunk_document(CATS_THEN_CARS, plan, models=ChunkModels(embedder=embedder))
    kids = result.parents[0].children
    assert {c.source_type for c in kids} == {SourceType.RECURSIVE}
    assert all(len(c.text) <= 80 for c in kids)
    assert result.report.fallbacks == 1


def test_percentile_matches_linear_interpolation() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 90) == 5.0
    assert percentile([0.0, 10.0], 95) == 9.5


class Proposer:
    def __init__(self, answer: Sequence[int | str] | Exception) -> None:
        self.answer = answer
        self.seen: list[str] = []

    def propose(self, text: str) -> Sequence[int | str]:
        self.seen.append(text)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_llm_boundaries_that_align_cut_the_text() -> None:
    proposer = Proposer(["The car drives"])
    plan = child_plan(Strategy.LLM, StepParams(80))
    result = chunk_document(CATS_THEN_CARS, plan, models=ChunkModels(proposer=proposer))
    kids = result.parents[0].children
    assert [c.text for c in kids] == [
        "The cat sleeps. A cat purrs. My cat eats. The cat plays.",
        "The car drives. A car stops. My car honks. The car parks.",
    ]
    assert {c.source_type for c in kids} == {SourceType.LLM}
    assert proposer.seen == [CATS_THEN_CARS]


def test_llm_pieces_still_too_large_are_cut_recursively() -> None:
    plan = child_plan(Strategy.LLM, StepParams(40))
    result = chunk_document(CATS_THEN_CARS, plan, models=ChunkModels(proposer=Proposer([57])))
    kids = result.parents[0].children
    assert all(len(c.text) <= 40 for c in kids)
    assert {c.source_type for c in kids} == {SourceType.RECURSIVE}  # both halves re-cut


@pytest.mark.parametrize(
    "answer",
    [
        ["The bus drives"],  # invented text
        ["The car drives", "The cat sleeps"],  # out of order
        [500],  # offset out of range
        TimeoutError("model timed out"),
        ValueError("garbage reply"),
    ],
)
def test_llm_proposals_that_do_not_align_fall_back_to_recursive(answer: object) -> None:
    plan = child_plan(Strategy.LLM, StepParams(80))
    result = chunk_document(CATS_THEN_CARS, plan, models=ChunkModels(proposer=Proposer(answer)))  # type: ignore[arg-type]
    kids = result.parents[0].children
    assert {c.source_type for c in kids} == {SourceType.RECURSIVE}
    assert result.report.fallbacks == 1
    for c in kids:
        assert CATS_THEN_CARS[c.start : c.end] == c.text


def test_align_proposal_accepts_offsets_and_snippets_only_in_order() -> None:
    text = "abc def ghi"
    assert align_proposal(text, ["def", 8]) == [4, 8]
    assert align_proposal(text, ["abc", "ghi"]) == [8]  # a boundary at the start is ignored
    assert align_proposal(text, ["ghi", "def"]) is None
    assert align_proposal(text, ["xyz"]) is None
    assert align_proposal(text, [True]) is None
    assert align_proposal(text, [" "]) is None
