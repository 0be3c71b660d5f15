"""The index of a user's active embedding generation (issue 21): where search's dense
retriever reads and where VECTORIZING writes, so both are always in one vector space.

Generation 0 is the base index, as before re-embeddings existed (and the only one of an
index that is not generation-aware). Another generation is `VectorSpaces.in_space` of it, at
the dimension of the user's default EMBEDDING config: the swap makes the target config the
default in the transaction that makes its generation active, so the two always name one
space. Sparse vectors are not generational: they stay in the base index.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import (
    VectorIndex,
    VectorIndexUnavailable,
    VectorSpace,
    VectorSpaces,
)
from ragline.domain.reembedding import Generations, ReembeddingStatus


@runtime_checkable
class _GenerationAware(VectorSpaces, Protocol):
    """An index that also holds generations (embedded, Qdrant; pgvector once it does)."""


def spaces_of(index: VectorIndex) -> VectorSpaces | None:
    """The index's generation-aware face, or None (then only generation 0 exists)."""
    return index if isinstance(index, _GenerationAware) else None


async def active_model(
    uow: UnitOfWork, user_id: str, *, attempts: int = 3
) -> tuple[EmbeddingConfig | None, int]:
    """The user's default EMBEDDING config and active generation, read as one pair.

    The swap writes both in one transaction, but under READ COMMITTED two reads may straddle
    its commit. Generations are read, then the config; while a shadow is open (a swap may
    come) they are read again: the same version means nothing committed in between (a swap
    bumps it), another means read the pair again. Without a shadow it is one extra read."""
    config, gens = await _model_and_generations(uow, user_id, attempts)
    return config, gens.active


async def _model_and_generations(
    uow: UnitOfWork, user_id: str, attempts: int, first: Generations | None = None
) -> tuple[EmbeddingConfig | None, Generations]:
    for _ in range(attempts):
        gens = first or await uow.reembeddings.generations(user_id)
        first = None
        config = await uow.model_configs.default_embedding(user_id)
        if gens.shadow is None:
            return config, gens
        again = await uow.reembeddings.generations(user_id)
        if again.version == gens.version:
            return config, gens
    raise VectorIndexUnavailable(f"user {user_id}'s generations kept moving while read")


async def index_of(
    base: VectorIndex, spaces: VectorSpaces | None, generation: int, dimension: int
) -> VectorIndex:
    """The index of one generation: the base index for 0, else its space's."""
    if generation == 0:
        return base
    if spaces is None:
        raise VectorIndexUnavailable(
            f"generation {generation} needs a generation-aware vector index (VectorSpaces)"
        )
    return await spaces.in_space(VectorSpace(generation, dimension))


async def active_dense_index(uow: UnitOfWork, base: VectorIndex, user_id: str) -> VectorIndex:
    """The index holding the user's dense vectors now (the base index until a swap)."""
    return (await user_indexes(uow, base, user_id)).active.index


@attrs.frozen
class DenseSpace:
    """One generation's dense index and the model its vectors come from (None when the
    user has no default config: generation 0 only)."""

    generation: int
    index: VectorIndex
    config: EmbeddingConfig | None


@attrs.frozen
class UserIndexes:
    """Every index holding one user's points now: the base index (sparse vectors, and dense
    ones for generation 0), the active generation's dense index and, while a copy runs, the
    shadow's. A delete or relabel of the user's points goes to `all`; a new dense vector to
    `active` with its model (and to `shadow` with the shadow's, see `user_indexes`)."""

    base: VectorIndex
    active: DenseSpace
    shadow: DenseSpace | None = None

    @property
    def all(self) -> list[VectorIndex]:
        """Base, active, shadow; each index once (generation 0's dense index is the base)."""
        found: dict[int, VectorIndex] = {0: self.base}
        for space in (self.active, self.shadow):
            if space is not None:
                found.setdefault(space.generation, space.index)
        return list(found.values())


async def user_indexes(
    uow: UnitOfWork, base: VectorIndex, user_id: str, *, attempts: int = 3
) -> UserIndexes:
    """The one rule for "which dense indexes does this user have now" (issue 21), for every
    writer besides VECTORIZING and the copy: document deletes, metadata relabels, chunk
    switches and edits, a lineage's removal.

    A user who never re-embedded costs one read (their generations) and gets the base index
    alone; the config is then read only by a caller that embeds. Otherwise the active pair
    is read as search reads it, and the shadow's dimension and model from the user's active
    re-embedding once it copies (COPYING or READY). A PLANNED one's shadow holds nothing yet:
    its copy reads the chunk rows, labels and texts after this writer's row change committed
    (docs/state-machine.md, "The other writers of a user's points", says what races remain)."""
    gens = await uow.reembeddings.generations(user_id)
    if gens.active == 0 and gens.shadow is None:
        return UserIndexes(base, DenseSpace(0, base, None))
    config, gens = await _model_and_generations(uow, user_id, attempts, first=gens)
    spaces = spaces_of(base)
    if gens.active == 0 or config is None:
        active = DenseSpace(0, base, config)
    else:
        index = await index_of(base, spaces, gens.active, config.dimension)
        active = DenseSpace(gens.active, index, config)
    shadow = None
    if gens.shadow is not None:
        item = await uow.reembeddings.active_for(user_id)
        copying = item is not None and item.status is not ReembeddingStatus.PLANNED
        if item is not None and copying and item.target_generation == gens.shadow:
            spec = item.target
            index = await index_of(base, spaces, gens.shadow, spec.dimension)
            model = EmbeddingConfig(
                user_id,
                spec.provider,
                spec.model,
                spec.dimension,
                item.target_base_url,
                item.target_api_key,
            )
            shadow = DenseSpace(gens.shadow, index, model)
    return UserIndexes(base, active, shadow)


async def dense_indexes(
    uow_factory: UnitOfWorkFactory, base: VectorIndex, user_id: str
) -> list[VectorIndex]:
    """`user_indexes(...).all` in a unit of work of its own: where a delete or relabel of
    the user's points must go."""
    async with uow_factory() as uow:
        return (await user_indexes(uow, base, user_id)).all
