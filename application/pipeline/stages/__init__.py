"""The Stage template and the six stages, in pipeline order."""

from ragline.application.pipeline.services import StageServices
from ragline.application.pipeline.stages.base import PipelineStage
from ragline.application.pipeline.stages.chunking import ChunkingStage
from ragline.application.pipeline.stages.cleaning import CleaningStage
from ragline.application.pipeline.stages.keyword_indexing import KeywordIndexingStage
from ragline.application.pipeline.stages.pretokenize import PretokenizeStage
from ragline.application.pipeline.stages.sparse_vectorizing import SparseVectorizingStage
from ragline.application.pipeline.stages.vectorizing import VectorizingStage

STAGE_CLASSES: tuple[type[PipelineStage], ...] = (
    CleaningStage,
    ChunkingStage,
    VectorizingStage,
    PretokenizeStage,
    KeywordIndexingStage,
    SparseVectorizingStage,
)


def default_stages(services: StageServices) -> list[PipelineStage]:
    """The six stages in the order of docs/design/0001-pipeline-contract.md, sharing `services`."""
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
]
