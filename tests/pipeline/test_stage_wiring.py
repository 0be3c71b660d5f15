"""Stages pass data only as declared outputs -> inputs: a stage reads only what it declared,
gives only what it declared, and a stage list whose inputs no earlier stage gives, or that
misses a declared stage, is refused at build time."""

from __future__ import annotations

import typing
from typing import Any, ClassVar

import attrs
import pytest

from ragline.application.pipeline.outputs import (
    StageOutputs,
    Takes,
    UndeclaredInput,
    check_wiring,
)
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages import (
    STAGE_CLASSES,
    CleaningStage,
    PipelineStage,
    in_declared_order,
)
from ragline.application.pipeline.stages.chunking import ChunkingStage
from ragline.application.pipeline.stages.cleaning import CleanedMarkdown
from ragline.application.pipeline.stages.indexing import RememberedChildren
from ragline.application.pipeline.stages.pretokenize import TokenizedChildren
from ragline.domain.parse_run import STAGE_ORDER, MarkdownLocation, Stage
from tests.fakes.harness import Harness


def _cleaned() -> CleanedMarkdown:
    return CleanedMarkdown(MarkdownLocation("markdown", "7/a.md"), "# a", "builtin")


def test_the_stage_classes_follow_the_declaration() -> None:
    assert [cls.stage for cls in STAGE_CLASSES] == list(STAGE_ORDER)
    assert in_declared_order(tuple(reversed(STAGE_CLASSES))) == STAGE_CLASSES


def test_a_declared_stage_without_a_class_is_refused() -> None:
    with pytest.raises(ValueError, match="SPARSE_VECTORIZING"):
        in_declared_order(STAGE_CLASSES[:-1])


def test_every_input_is_given_by_an_earlier_stage_and_says_what_replaces_it() -> None:
    given: set[type] = set()
    for cls in STAGE_CLASSES:
        for takes in cls.takes:
            assert takes.output in given, (cls.__name__, takes.output)
            assert takes.when_absent  # a resume never has it: the stage must re-derive it
        if cls.gives is not None:
            given.add(cls.gives)
    assert given == {CleanedMarkdown, RememberedChildren, TokenizedChildren}


def test_an_input_no_earlier_stage_gives_is_refused() -> None:
    wiring = [(c.__name__, c.gives, c.takes) for c in STAGE_CLASSES]
    chunking_first = [wiring[1], wiring[0], *wiring[2:]]
    with pytest.raises(ValueError, match="ChunkingStage takes CleanedMarkdown"):
        check_wiring(chunking_first)


def test_a_stage_reads_only_what_it_declared_and_take_lets_go() -> None:
    outputs = StageOutputs()
    outputs.put(_cleaned())
    chunking = outputs.view(ChunkingStage.takes)
    with pytest.raises(UndeclaredInput):
        chunking.get(TokenizedChildren)
    assert chunking.get(CleanedMarkdown) == _cleaned()
    assert chunking.take(CleanedMarkdown) == _cleaned()
    assert chunking.get(CleanedMarkdown) is None  # not held for the stages after it
    assert outputs.view([Takes(RememberedChildren, "x")]).get(RememberedChildren) is None


class _LyingCleaning(CleaningStage):
    """Gives something other than its declared output."""

    gives: ClassVar[type | None] = CleanedMarkdown

    async def run(self, ctx: Any, inputs: Any) -> Any:
        return RememberedChildren([])


async def test_a_stage_giving_what_it_did_not_declare_is_a_bug_not_a_success(
    h: Harness,
) -> None:
    stages: list[PipelineStage[Any]] = [_LyingCleaning(h.services)]
    from ragline.application.pipeline.orchestrator import ParseTaskPipeline

    task = h.task("txt")
    with pytest.raises(TypeError, match="gave RememberedChildren"):
        await ParseTaskPipeline(h.services, stages=stages).handle(task)
    assert h.run(task.task_id).stages[Stage.CLEANING].status.value == "PROCESSING"


async def test_a_run_ends_holding_no_outputs_and_no_spooled_plan(h: Harness) -> None:
    task = h.task("txt")
    seen: list[StageOutputs] = []
    from ragline.application.pipeline.orchestrator import ParseTaskPipeline

    class Watching(ParseTaskPipeline):
        def stages(self) -> list[PipelineStage[Any]]:
            built = super().stages()
            original = built[-1].execute

            async def execute(ctx: Any) -> None:
                seen.append(ctx.outputs)
                await original(ctx)

            built[-1].execute = execute  # type: ignore[method-assign]
            return built

    await Watching(h.services).handle(task)
    assert h.run(task.task_id).pipeline_status.value == "SUCCESS"
    assert seen and seen[0].read(TokenizedChildren, remove=False) is None
    assert not list(h.services.workspace.root.glob("**/*kwplan*"))


def _needs_of(cls: type) -> set[str]:
    """The ports a stage's constructor declares (its `...Needs` protocol's properties)."""
    needs = typing.get_type_hints(cls.__init__)["services"]
    return {n for k in needs.__mro__ for n, v in vars(k).items() if isinstance(v, property)}


def test_each_stage_declares_only_part_of_the_services_and_the_bag_meets_every_need() -> None:
    fields = {a.name for a in attrs.fields(StageServices)}
    template = _needs_of(PipelineStage)
    # the indexes: the lineage swap at SUCCESS removes the old version from them
    assert template == {"uow", "clock", "settings", "metrics", "tracing", "vectors", "keywords"}
    own = {cls.stage: _needs_of(cls) - template for cls in STAGE_CLASSES}
    for stage, needed in own.items():
        assert needed and needed <= fields, stage
    assert own[Stage.SPARSE_VECTORIZING] == {"sparse"}  # vectors: the template has them
    assert own[Stage.PRETOKENIZE] == {"tokenizer", "workspace"}
    assert "references" not in set().union(*own.values())  # checked before any stage runs
