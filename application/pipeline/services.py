"""StageServices: every port the stages use, in one bag handed to each stage.

Stages do their work through these ports; only the Stage template writes run statuses.
"""

from __future__ import annotations

import attrs

from ragline.application.access import ReferencePolicy
from ragline.application.pipeline.chunker import MarkdownChunker
from ragline.application.pipeline.parse_cache import CleaningParseCache
from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.clock import Clock
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.metrics import NO_METRICS, PipelineMetrics
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.parser import Parser
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.tracing import NO_TRACING, Tracing
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.ports.vector_index import VectorIndex
from ragline.application.workspace import Workspace


@attrs.frozen
class StageServices:
    """The ports and knobs of the stages (bootstrap builds one and shares it)."""

    uow: UnitOfWorkFactory
    clock: Clock
    storage: ObjectStorage
    parser: Parser
    chunker: MarkdownChunker
    embedders: EmbedderResolver
    vectors: VectorIndex
    keywords: KeywordIndex
    tokenizer: Tokenizer
    sparse: SparseEncoder
    workspace: Workspace
    references: ReferencePolicy
    """The one check of every object a task names (docs/security.md), before any stage."""
    settings: PipelineSettings = attrs.field(factory=PipelineSettings)
    metrics: PipelineMetrics = NO_METRICS
    tracing: Tracing = NO_TRACING
    parse_cache: CleaningParseCache | None = None
    """CLEANING asks it first (docs/parse-cache.md); None: every CLEANING parses."""
    mineru: Parser | None = None
    """The MinerU client (backend mineru, direct pull); None when no token is configured."""
