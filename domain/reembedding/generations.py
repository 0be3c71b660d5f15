"""A user's embedding generations: the one search answers from, and the shadow being filled.

Generation numbers only grow; 0 is the one every user starts with. A finished run writes its
vectors into every generation in `write_targets` (the active one and, during a copy, the
shadow), so a run that lands during the copy is in both. A run that read its targets before
they changed writes the rest (`catch_up`) before it may reach SUCCESS.

A swap must not commit between a run's VECTORIZING start and its SUCCESS unless the run
reads its target after the swap: `vectorizing_starts` is the counter that makes it so.
"""

from __future__ import annotations

import attrs

from ragline.domain.reembedding.errors import IllegalGenerationMove


@attrs.frozen
class EmbeddingSpec:
    """The model a generation's vectors come from: one vector space, one dimension."""

    provider: str
    model: str
    dimension: int

    def __attrs_post_init__(self) -> None:
        if self.dimension < 1:
            raise ValueError(f"an embedding dimension is at least 1, not {self.dimension}")


@attrs.frozen
class Generations:
    """One user's generations; `version` is storage's compare-and-set token."""

    user_id: str
    active: int = 0
    shadow: int | None = None
    newest: int = 0
    """The highest number ever given: a cancelled generation's number is never reused, so a
    dead worker's late write into it can never land in a later shadow."""
    version: int = 0
    vectorizing_starts: int = 0
    """How many VECTORIZING stages of the user began while a shadow was open. Storage counts
    them (`note_vectorizing`) and never writes this from here: a swap commits only if it is
    unchanged since the swap read it, so a run that began after the swap's last look at the
    user's runs cannot have read the old generation and land after the swap unseen."""

    def __attrs_post_init__(self) -> None:
        if self.newest < max(self.active, self.shadow or 0):
            raise ValueError(f"generation {self.newest} cannot be the newest given here")

    @property
    def write_targets(self) -> frozenset[int]:
        """Where a run's vectors go now."""
        if self.shadow is None:
            return frozenset({self.active})
        return frozenset({self.active, self.shadow})

    @property
    def next_generation(self) -> int:
        return self.newest + 1

    def catch_up(self, written: frozenset[int]) -> frozenset[int]:
        """The targets a run that wrote `written` still owes before its SUCCESS commit."""
        return self.write_targets - written

    def open_shadow(self, generation: int) -> Generations:
        if self.shadow is not None:
            raise IllegalGenerationMove(
                f"user {self.user_id} already fills generation {self.shadow}"
            )
        if generation <= self.newest:
            raise IllegalGenerationMove(
                f"generation {generation} is not newer than {self.newest}, the newest given"
            )
        return attrs.evolve(self, shadow=generation, newest=generation, version=self.version + 1)

    def swap(self, generation: int) -> Generations:
        """The shadow becomes the one search answers from."""
        self._require_shadow(generation, "swap to")
        return attrs.evolve(self, active=generation, shadow=None, version=self.version + 1)

    def drop_shadow(self, generation: int) -> Generations:
        """A cancelled or failed copy: the active generation stays as it was."""
        self._require_shadow(generation, "drop")
        return attrs.evolve(self, shadow=None, version=self.version + 1)

    def _require_shadow(self, generation: int, move: str) -> None:
        if self.shadow != generation:
            raise IllegalGenerationMove(
                f"cannot {move} generation {generation}: the shadow is {self.shadow}"
            )
