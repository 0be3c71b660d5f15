"""ChunkDocument: how a document is cut (used by the pipeline and by `ragline chunk`).

Builds the structure tree through the StructureBuilder port (with body blocks only when the
plan's child pipeline follows structure), wires the optional embedder / chat model into the
SEMANTIC and LLM strategies, and runs the domain engine. Pure computation: nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragline.application.chunking.boundaries import LlmBoundaryProposer
from ragline.application.ports.llm import ChatModel
from ragline.application.ports.structure import StructureBuilder
from ragline.domain.chunking import (
    PRESETS,
    ChunkingResult,
    ChunkModels,
    ChunkPlan,
    SentenceEmbedder,
    TokenCounter,
    WhitespaceCjkTokenCounter,
    chunk_document,
)


class UnknownPlanError(KeyError):
    """No plan of that name; the message lists the known ones."""


class ChunkDocument:
    def __init__(
        self,
        structure: StructureBuilder,
        *,
        embedder: SentenceEmbedder | None = None,
        llm: ChatModel | None = None,
        token_counter: TokenCounter | None = None,
        plans: Mapping[str, ChunkPlan] = PRESETS,
    ) -> None:
        self._structure = structure
        self._plans = plans
        self._models = ChunkModels(
            embedder=embedder,
            proposer=LlmBoundaryProposer(llm) if llm is not None else None,
            token_counter=token_counter or WhitespaceCjkTokenCounter(),
        )

    @property
    def plan_names(self) -> list[str]:
        return sorted(self._plans)

    def plan(self, name: str) -> ChunkPlan:
        try:
            return self._plans[name]
        except KeyError:
            known = ", ".join(self.plan_names)
            raise UnknownPlanError(f"unknown chunk plan {name!r}; known: {known}") from None

    def __call__(self, markdown: str, plan: ChunkPlan | str = "default") -> ChunkingResult:
        chosen = self.plan(plan) if isinstance(plan, str) else plan
        tree = self._structure.build(markdown, blocks=chosen.child_uses_structure)
        return chunk_document(markdown, chosen, tree=tree, models=self._models)
