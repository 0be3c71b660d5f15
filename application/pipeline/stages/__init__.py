"""The Stage template and one class per declared stage, in the declaration's order.

The order is domain/parse_run/stage.py's `Stage`; this package only registers each stage's
class (one import line each) and refuses, at import, a declared stage without a class or a
stage that takes what no earlier stage gives.
"""

from typing import Any

from ragline.application.pipeline.outputs import check_wiring
from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.chunking import ChunkingStage
from ragline.application.pipeline.stages.cleaning import CleaningStage
from ragline.application.pipeline.stages.keyword_indexing import KeywordIndexingStage
from ragline.application.pipeline.stages.pretokenize import PretokenizeStage
from ragline.application.pipeline.stages.sparse_vectorizing import SparseVectorizingStage
from ragline.application.pipeline.stages.vectorizing import VectorizingStage
from ragline.domain.parse_run import STAGE_ORDER

StageClass = type[PipelineStage[Any]]


def in_declared_order(classes: tuple[StageClass, ...]) -> tuple[StageClass, ...]:
    """`classes` ordered as the declaration; ValueError unless each stage has one class."""
    by_stage = {cls.stage: cls for cls in classes}
    missing = [stage.value for stage in STAGE_ORDER if stage not in by_stage]
    if missing or len(by_stage) != len(classes):
        raise ValueError(f"stage classes do not match the declaration (missing: {missing})")
    ordered = tuple(by_stage[stage] for stage in STAGE_ORDER)
    check_wiring([(cls.__name__, cls.gives, cls.takes) for cls in ordered])
    return ordered


STAGE_CLASSES: tuple[StageClass, ...] = in_declared_order(
    (
        CleaningStage,
        ChunkingStage,
        VectorizingStage,
        PretokenizeStage,
        KeywordIndexingStage,
        SparseVectorizingStage,
    )
)


def default_stages(services: StageServices) -> list[PipelineStage[Any]]:
    """Every declared stage, in order, sharing `services`."""
    return [cls(services) for cls in STAGE_CLASSES]


__all__ = [
    "STAGE_CLASSES",
    "ChunkingStage",
    "CleaningStage",
    "KeywordIndexingStage",
    "PipelineStage",
    "PretokenizeStage",
    "SparseVectorizingStage",
    "VectorizingStage",
    "default_stages",
    "in_declared_order",
]
