"""Chunk plans: a PARENT pipeline and a CHILD pipeline of ordered steps.

Steps are sorted by pipeline (PARENT first), step number, then id, so the same plan always
runs the same way; a plan missing either pipeline is rejected as an internal-state error.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

import attrs

from ragline.domain.chunking.errors import IncompletePlanError


class Pipeline(StrEnum):
    PARENT = "PARENT"
    CHILD = "CHILD"


class Strategy(StrEnum):
    STRUCTURE = "STRUCTURE"
    RECURSIVE = "RECURSIVE"
    SEMANTIC = "SEMANTIC"
    LLM = "LLM"


class SizeUnit(StrEnum):
    CHARS = "CHARS"
    TOKENS = "TOKENS"


_PIPELINE_ORDER = {Pipeline.PARENT: 0, Pipeline.CHILD: 1}


def _positive(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be >= 1, got {value}")


@attrs.frozen
class StepParams:
    """Size bounds and strategy knobs. A strategy only cuts pieces larger than `max_size`;
    pieces smaller than `min_size` are merged into a neighbour when the result still fits."""

    max_size: int = attrs.field(default=2000, validator=_positive)
    min_size: int = 0
    overlap: int = 0
    unit: SizeUnit = SizeUnit.CHARS
    percentile: float = 90.0  # SEMANTIC: break where similarity drops below this percentile
    batch_size: int = 64  # SEMANTIC: sentences per embedding call

    def __attrs_post_init__(self) -> None:
        if not 0 <= self.min_size <= self.max_size:
            raise ValueError("min_size must lie in [0, max_size]")
        if not 0 <= self.overlap < self.max_size:
            raise ValueError("overlap must lie in [0, max_size)")
        if not 0.0 <= self.percentile <= 100.0:
            raise ValueError("percentile must lie in [0, 100]")


@attrs.frozen
class ChunkStep:
    pipeline: Pipeline
    step_no: int
    strategy: Strategy
    params: StepParams = StepParams()
    id: str = ""

    def sort_key(self) -> tuple[int, int, str]:
        return (_PIPELINE_ORDER[self.pipeline], self.step_no, self.id)


def _sorted_steps(steps: Iterable[ChunkStep]) -> tuple[ChunkStep, ...]:
    return tuple(sorted(steps, key=ChunkStep.sort_key))


@attrs.frozen
class ChunkPlan:
    """A named set of steps; `parent_steps` and `child_steps` are each sorted and non-empty."""

    name: str
    steps: tuple[ChunkStep, ...] = attrs.field(converter=_sorted_steps)

    @property
    def parent_steps(self) -> tuple[ChunkStep, ...]:
        steps = tuple(s for s in self.steps if s.pipeline is Pipeline.PARENT)
        if not steps:
            raise IncompletePlanError(f"plan {self.name!r} has no PARENT pipeline")
        return steps

    @property
    def child_steps(self) -> tuple[ChunkStep, ...]:
        steps = tuple(s for s in self.steps if s.pipeline is Pipeline.CHILD)
        if not steps:
            raise IncompletePlanError(f"plan {self.name!r} has no CHILD pipeline")
        return steps

    @property
    def child_uses_structure(self) -> bool:
        return any(
            s.pipeline is Pipeline.CHILD and s.strategy is Strategy.STRUCTURE for s in self.steps
        )
