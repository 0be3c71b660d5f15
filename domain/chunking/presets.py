"""Named plans. `default` suits ordinary documents: parents are the content-bearing sections,
refined recursively to at most 2000 characters; children are ~512-character recursive cuts."""

from __future__ import annotations

from ragline.domain.chunking.plan import (
    ChunkPlan,
    ChunkStep,
    Pipeline,
    SizeUnit,
    StepParams,
    Strategy,
)

P, C = Pipeline.PARENT, Pipeline.CHILD


def _plan(name: str, parent_max: int, child: list[ChunkStep], parent_min: int = 0) -> ChunkPlan:
    return ChunkPlan(
        name,
        (
            ChunkStep(P, 1, Strategy.STRUCTURE, id="p1"),
            ChunkStep(P, 2, Strategy.RECURSIVE, StepParams(parent_max, parent_min), id="p2"),
            *child,
        ),
    )


def _recursive_child(max_size: int, min_size: int, step_no: int = 1) -> ChunkStep:
    return ChunkStep(
        C, step_no, Strategy.RECURSIVE, StepParams(max_size, min_size), id=f"c{step_no}"
    )


PRESETS: dict[str, ChunkPlan] = {
    "default": _plan("default", 2000, [_recursive_child(512, 64)], parent_min=200),
    "fine": _plan("fine", 1000, [_recursive_child(256, 32)], parent_min=100),
    "coarse": _plan("coarse", 4000, [_recursive_child(1024, 128)], parent_min=400),
    "structure": _plan(
        "structure",
        2000,
        [ChunkStep(C, 1, Strategy.STRUCTURE, id="c1"), _recursive_child(512, 64, step_no=2)],
        parent_min=200,
    ),
    "semantic": _plan(
        "semantic",
        2000,
        [ChunkStep(C, 1, Strategy.SEMANTIC, StepParams(512, 64, percentile=90.0), id="c1")],
        parent_min=200,
    ),
    "llm": _plan(
        "llm", 2000, [ChunkStep(C, 1, Strategy.LLM, StepParams(512, 64), id="c1")], parent_min=200
    ),
    "tokens": _plan(
        "tokens",
        2000,
        [ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(128, 16, unit=SizeUnit.TOKENS), id="c1")],
        parent_min=200,
    ),
}
DEFAULT_PLAN = PRESETS["default"]


def preset(name: str) -> ChunkPlan:
    """The preset called `name` (KeyError listing the known names otherwise)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(
            f"unknown chunk plan {name!r}; known: {', '.join(sorted(PRESETS))}"
        ) from None
