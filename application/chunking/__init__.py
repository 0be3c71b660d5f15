"""Chunking use case: build the structure tree through its port, run the domain engine."""

from ragline.application.chunking.boundaries import LlmBoundaryProposer
from ragline.application.chunking.chunk_document import ChunkDocument, UnknownPlanError
from ragline.application.chunking.token_count import TokenizerTokenCounter

__all__ = ["ChunkDocument", "LlmBoundaryProposer", "TokenizerTokenCounter", "UnknownPlanError"]
