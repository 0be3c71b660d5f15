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

from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.ports.vector_index import (
    VectorIndex,
    VectorIndexUnavailable,
    VectorSpace,
    VectorSpaces,
)


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
    for _ in range(attempts):
        gens = await uow.reembeddings.generations(user_id)
        config = await uow.model_configs.default_embedding(user_id)
        if gens.shadow is None:
            return config, gens.active
        again = await uow.reembeddings.generations(user_id)
        if again.version == gens.version:
            return config, gens.active
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
    """The index holding the user's dense vectors now (the base index until a swap). What
    a write or delete of a document's dense points needs besides the base index, which keeps
    the sparse ones."""
    config, generation = await active_model(uow, user_id)
    if generation == 0 or config is None:
        return base
    return await index_of(base, spaces_of(base), generation, config.dimension)
