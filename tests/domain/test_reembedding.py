"""The re-embedding domain (issue 21): its moves, and the properties of
docs/state-machine.md ("The re-embedding machine") under a Hypothesis machine."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import settings

from ragline.domain.reembedding import (
    CopyBatchStatus,
    EmbeddingSpec,
    Generations,
    IllegalCopyBatchMove,
    IllegalGenerationMove,
    IllegalReembeddingMove,
    NotCaughtUp,
    Reembedding,
    ReembeddingStatus,
    split,
)
from ragline.testing.reembedding import ReembeddingMachine

AT = datetime(2026, 1, 1)

TestReembeddingMachine = ReembeddingMachine.TestCase
TestReembeddingMachine.settings = settings(stateful_step_count=40)


def planned() -> Reembedding:
    return Reembedding.plan("r1", "u", 0, 1, EmbeddingSpec("p", "m", 8), AT)


def test_the_happy_path_bumps_the_version_at_every_move() -> None:
    r = planned()
    r.start(3, AT)
    r.copied(2)
    r.copied(5)  # never past the total
    assert (r.done, r.total) == (3, 3)
    r.mark_ready(0, AT)
    r.swap(0, AT)
    assert r.status is ReembeddingStatus.SWAPPED
    assert r.version == 5


def test_ready_and_swap_need_every_chunk() -> None:
    r = planned()
    r.start(2, AT)
    with pytest.raises(NotCaughtUp):
        r.mark_ready(1, AT)
    r.mark_ready(0, AT)
    version = r.version
    with pytest.raises(NotCaughtUp):
        r.swap(1, AT)
    assert (r.status, r.version) == (ReembeddingStatus.READY, version)
    r.catch_up(1)
    assert (r.status, r.total) == (ReembeddingStatus.COPYING, 3)


def test_terminal_ones_do_not_move() -> None:
    r = planned()
    r.cancel(AT)
    with pytest.raises(IllegalReembeddingMove):
        r.start(1, AT)
    with pytest.raises(IllegalReembeddingMove):
        r.cancel(AT)
    with pytest.raises(IllegalReembeddingMove):
        r.fail("x", AT)
    assert r.version == 1


def test_generations_one_active_one_shadow() -> None:
    g = Generations("u").open_shadow(1)
    assert g.write_targets == {0, 1}
    assert g.catch_up(frozenset({0})) == {1}
    with pytest.raises(IllegalGenerationMove):
        g.open_shadow(2)
    with pytest.raises(IllegalGenerationMove):
        g.swap(2)
    assert g.swap(1) == Generations("u", active=1, shadow=None, newest=1, version=2)
    dropped = g.drop_shadow(1)
    assert dropped.write_targets == {0}
    assert dropped.next_generation == 2  # a cancelled number is never given again
    with pytest.raises(IllegalGenerationMove):
        dropped.open_shadow(1)
    with pytest.raises(IllegalGenerationMove):
        Generations("u", active=3, newest=3).open_shadow(3)
    with pytest.raises(ValueError, match="newest"):
        Generations("u", active=3)


def test_batches_cover_the_ids_in_order_and_leases_hand_over() -> None:
    batches = split("r1", ["c3", "c1", "c2", "c5", "c4"], 2)
    assert [(b.first_chunk_id, b.last_chunk_id, b.size) for b in batches] == [
        ("c1", "c2", 2),
        ("c3", "c4", 2),
        ("c5", "c5", 1),
    ]
    held = batches[0].claim("w1", AT, timedelta(seconds=10))
    with pytest.raises(IllegalCopyBatchMove):
        held.claim("w2", AT + timedelta(seconds=9), timedelta(seconds=10))
    taken = held.claim("w2", AT + timedelta(seconds=10), timedelta(seconds=10))
    assert (taken.owner, taken.claims) == ("w2", 2)
    done = taken.finish(2)
    assert done.status is CopyBatchStatus.DONE
    with pytest.raises(IllegalCopyBatchMove):
        done.finish(2)


class _Doc:
    def draw(self, _: object) -> str:
        return "d0"


def test_a_run_that_skips_its_catch_up_breaks_p1() -> None:
    """A run vectorized before the plan and succeeding after the swap owes the new
    generation its chunks; without the catch-up search would miss them (P1)."""
    mutant = type("Mutant", (ReembeddingMachine,), {"runs_catch_up": False})()
    mutant.vectorize("d0", 1)
    mutant.plan(3)
    mutant.start(1)
    mutant.finish_copy(1)
    mutant.swap(1)
    mutant.succeed(_Doc())
    with pytest.raises(AssertionError, match="P1"):
        mutant.search_answers_from_one_complete_generation()
