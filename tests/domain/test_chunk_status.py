"""Chunk index status moves are compare-and-sets that never redo a SUCCESS chunk."""

import pytest

from ragline.domain.parse_run import (
    BEGIN_INDEXING,
    CHUNK_STATUS_MOVES,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
    IllegalChunkStatusMove,
    needs_indexing,
)

S = ChunkIndexStatus


def test_moves_expose_their_compare_and_set() -> None:
    assert BEGIN_INDEXING.allowed_from == {S.PENDING, S.FAILED} and BEGIN_INDEXING.to is S.INDEXING
    assert COMPLETE.allowed_from == {S.INDEXING} and COMPLETE.to is S.SUCCESS
    assert FAIL.allowed_from == {S.INDEXING} and FAIL.to is S.FAILED
    assert all(S.SUCCESS not in move.allowed_from for move in CHUNK_STATUS_MOVES)


@pytest.mark.parametrize("move", CHUNK_STATUS_MOVES, ids=lambda m: m.name)
@pytest.mark.parametrize("current", list(ChunkIndexStatus), ids=lambda s: s.value)
def test_apply_follows_allowed_from(move: object, current: ChunkIndexStatus) -> None:
    from ragline.domain.parse_run import ChunkStatusMove

    assert isinstance(move, ChunkStatusMove)
    if current in move.allowed_from:
        assert move.permits(current) and move.apply(current) is move.to
    else:
        assert not move.permits(current)
        with pytest.raises(IllegalChunkStatusMove):
            move.apply(current)


def test_only_success_is_left_alone_on_resume() -> None:
    assert [s for s in ChunkIndexStatus if needs_indexing(s)] == [S.PENDING, S.INDEXING, S.FAILED]
