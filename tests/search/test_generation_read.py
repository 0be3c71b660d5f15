"""Search reads the user's default EMBEDDING config and active generation as one pair
(`search.spaces.active_model`): under READ COMMITTED the two reads may straddle a swap's
commit, so while a shadow is open the generations are read again and a moved version means
read the pair again. The stub unit of work commits the swap between the first two reads."""

from __future__ import annotations

import pytest

from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.application.ports.vector_index import VectorIndexUnavailable, VectorSpace
from ragline.application.search.spaces import active_dense_index, active_model, index_of
from ragline.domain.reembedding import Generations
from tests.fakes.indexes import FakeVectorIndex

OLD = EmbeddingConfig("u", "fake", "old", 4)
NEW = EmbeddingConfig("u", "fake", "new", 3)
COPYING = Generations("u", active=0, shadow=1, newest=1, version=1)
SWAPPED = COPYING.swap(1)


class Straddled:
    """`uow.reembeddings` and `uow.model_configs` where the swap commits at read `swap_at`."""

    def __init__(self, swap_at: int, moves: int = 1) -> None:
        self.reads, self.swap_at, self.moves = 0, swap_at, moves
        self.gens, self.config = COPYING, OLD
        self.reembeddings, self.model_configs = self, self

    def _read(self) -> None:
        self.reads += 1
        if self.reads == self.swap_at and self.moves:
            self.moves -= 1
            self.gens, self.config = SWAPPED, NEW

    async def generations(self, user_id: str) -> Generations:
        self._read()
        return self.gens

    async def default_embedding(self, user_id: str) -> EmbeddingConfig:
        self._read()
        return self.config


def uow(stub: Straddled) -> UnitOfWork:
    return stub  # type: ignore[return-value]


@pytest.mark.parametrize("swap_at", [1, 2, 3, 4, 99])
async def test_the_pair_is_never_mixed(swap_at: int) -> None:
    stub = Straddled(swap_at)
    config, generation = await active_model(uow(stub), "u")
    assert (config, generation) in {(OLD, 0), (NEW, 1)}


async def test_without_a_shadow_it_is_one_extra_read() -> None:
    stub = Straddled(swap_at=99)
    stub.gens = Generations("u")
    assert await active_model(uow(stub), "u") == (OLD, 0)
    assert stub.reads == 2


async def test_generations_that_keep_moving_are_an_outage() -> None:
    class Moving(Straddled):
        async def generations(self, user_id: str) -> Generations:
            self.gens = Generations("u", 0, 1, 1, self.gens.version + 1)
            return self.gens

    with pytest.raises(VectorIndexUnavailable):
        await active_model(uow(Moving(swap_at=0)), "u")


async def test_generation_0_is_the_base_index_and_others_their_space() -> None:
    base = FakeVectorIndex(dimension=4)
    assert await index_of(base, base, 0, 4) is base
    assert await index_of(base, base, 1, 3) is base.spaces[VectorSpace(1, 3)]
    with pytest.raises(VectorIndexUnavailable):
        await index_of(base, None, 1, 3)
    stub = Straddled(swap_at=1)
    assert await active_dense_index(uow(stub), base, "u") is base.spaces[VectorSpace(1, 3)]
