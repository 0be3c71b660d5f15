"""ChunkDocument wiring: structure port, embedder into SEMANTIC, tokenizer into token sizing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragline.adapters.structure.markdown import LineScanStructureBuilder
from ragline.adapters.tokenizer.jieba import JiebaTokenizer
from ragline.application.chunking import ChunkDocument, TokenizerTokenCounter, UnknownPlanError
from ragline.domain.chunking import (
    ChunkPlan,
    ChunkStep,
    Pipeline,
    SizeUnit,
    SourceType,
    StepParams,
    Strategy,
)


class TopicEmbedder:
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[t.count("cat") + 0.01, t.count("car") + 0.01] for t in texts]


def test_semantic_plan_uses_the_wired_embedder() -> None:
    cats = " ".join(f"The cat number {i} sleeps." for i in range(12))
    cars = " ".join(f"The car number {i} drives." for i in range(12))
    md = f"# Things\n\n{cats} {cars}\n"
    result = ChunkDocument(LineScanStructureBuilder(), embedder=TopicEmbedder())(md, "semantic")
    kids = result.parents[0].children
    assert SourceType.SEMANTIC in {c.source_type for c in kids}
    assert any(c.text.startswith("The car number 0") for c in kids)
    assert result.report.fallbacks == 0


def test_plans_by_name_or_object_and_unknown_names() -> None:
    use_case = ChunkDocument(LineScanStructureBuilder())
    assert "default" in use_case.plan_names
    with pytest.raises(UnknownPlanError, match="known"):
        use_case("text", "nope")
    custom = ChunkPlan(
        "custom",
        [
            ChunkStep(Pipeline.PARENT, 1, Strategy.RECURSIVE, StepParams(100)),
            ChunkStep(Pipeline.CHILD, 1, Strategy.RECURSIVE, StepParams(10)),
        ],
    )
    assert use_case("a few words of text here", custom).plan_name == "custom"


def test_token_sizing_through_the_tokenizer_port() -> None:
    counter = TokenizerTokenCounter(JiebaTokenizer())
    md = "".join(f"我们在北京大学学习自然语言处理第{i}课。" for i in range(8))
    plan = ChunkPlan(
        "tok",
        [
            ChunkStep(Pipeline.PARENT, 1, Strategy.RECURSIVE, StepParams(1000)),
            ChunkStep(Pipeline.CHILD, 1, Strategy.RECURSIVE, StepParams(20, unit=SizeUnit.TOKENS)),
        ],
    )
    result = ChunkDocument(LineScanStructureBuilder(), token_counter=counter)(md, plan)
    kids = result.parents[0].children
    assert len(kids) > 1
    assert all(counter.count(c.text) <= 20 for c in kids)
    assert "".join(c.text for c in kids) == md
