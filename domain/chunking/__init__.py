"""Parent/child chunking (docs/design/0004-chunking.md): structure tree, plans, candidates and the
engine."""

from ragline.domain.chunking.candidate import (
    Anchor,
    ChunkCandidate,
    ParentBlock,
    SourceType,
    chunk_id,
)
from ragline.domain.chunking.engine import (
    ChunkingReport,
    ChunkingResult,
    ParentPath,
    chunk_document,
)
from ragline.domain.chunking.errors import IncompletePlanError
from ragline.domain.chunking.models import BoundaryProposer, ChunkModels, SentenceEmbedder
from ragline.domain.chunking.plan import (
    ChunkPlan,
    ChunkStep,
    Pipeline,
    SizeUnit,
    StepParams,
    Strategy,
)
from ragline.domain.chunking.presets import DEFAULT_PLAN, PRESETS, preset
from ragline.domain.chunking.sizing import TokenCounter, WhitespaceCjkTokenCounter
from ragline.domain.chunking.structure import (
    Block,
    Heading,
    NodeType,
    StructureNode,
    StructureTree,
    build_tree,
)

__all__ = [
    "DEFAULT_PLAN",
    "PRESETS",
    "Anchor",
    "Block",
    "BoundaryProposer",
    "ChunkCandidate",
    "ChunkModels",
    "ChunkPlan",
    "ChunkStep",
    "ChunkingReport",
    "ChunkingResult",
    "Heading",
    "IncompletePlanError",
    "NodeType",
    "ParentBlock",
    "ParentPath",
    "Pipeline",
    "SentenceEmbedder",
    "SizeUnit",
    "SourceType",
    "StepParams",
    "Strategy",
    "StructureNode",
    "StructureTree",
    "TokenCounter",
    "WhitespaceCjkTokenCounter",
    "build_tree",
    "chunk_document",
    "chunk_id",
    "preset",
]
